import { distributionOf, emptyDistribution, percentileRanks, summarizeInPlace, type Distribution } from './distribution';
import { selectRanks } from './order-statistics';

/**
 * The distributions of the gaps between consecutive chunk offsets (inter-token latency), per
 * group and over the run, taken while streaming over the stored offsets. A run holds millions of
 * gaps, and laying them out in one array costs more in fresh memory than the arithmetic does.
 *
 * A group with few gaps is gathered whole and summarized as any sample is. A large one is taken
 * in two passes. The first counts its gaps, sums them, keeps the min and max, and counts each gap
 * in one of 2^18 buckets that follow numeric order (the top 18 bits of the gap's ordered bit
 * pattern: sign, exponent and 6 mantissa bits, so a bucket spans 1/64 of a binary octave). The
 * counts say which few buckets hold the ranks the percentiles need. The second pass sums squared
 * deviations from the mean and gathers the values of those buckets alone; selection within them
 * gives the exact order statistics.
 *
 * Every sum runs in the order a gathered array would be read, group after group and request after
 * request, so each figure equals `summarize` of the same gaps laid end to end.
 */
export function gapDistributions(groups: readonly (readonly ArrayLike<number>[])[]): { run: Distribution; groups: Distribution[] } {
  const bounds = groups.map((offsetLists) => offsetLists.reduce((sum, offsets) => sum + Math.max(0, offsets.length - 1), 0));
  const tallies = bounds.map(tallyFor);
  const run = tallies.length === 1 ? tallies[0]! : tallyFor(bounds.reduce((sum, bound) => sum + bound, 0));
  const alsoRun = (group: number) => (run === tallies[group] ? null : run);
  groups.forEach((offsetLists, group) => countGaps(offsetLists, tallies[group]!, alsoRun(group)));
  let secondPass = false;
  for (const tally of new Set([...tallies, run])) if (tally.planGather()) secondPass = true;
  if (secondPass) groups.forEach((offsetLists, group) => gatherGaps(offsetLists, tallies[group]!, alsoRun(group)));
  // With one group the run is that group: summarized once, since summarizing rearranges a whole tally's values.
  const runDistribution = run.distribution();
  return { run: runDistribution, groups: tallies.map((tally) => (tally === run ? runDistribution : tally.distribution())) };
}

/** Up to this many gaps a group is gathered whole: half a megabyte, and no second pass. */
const GATHER_WHOLE_UP_TO = 1 << 16;

interface GapTally {
  count(gap: number, bucket: number): void;
  /** Readies the second pass; false when this tally needs none. */
  planGather(): boolean;
  gather(gap: number, bucket: number): void;
  distribution(): Distribution;
}

function tallyFor(boundOnGaps: number): GapTally {
  return boundOnGaps <= GATHER_WHOLE_UP_TO ? new WholeTally(boundOnGaps) : new BucketedTally();
}

// The two passes are written out, not one visitor taking a callback: a call per gap through a
// closure costs several times the loop itself over millions of gaps.
function countGaps(offsetLists: readonly ArrayLike<number>[], group: GapTally, run: GapTally | null): void {
  for (const offsets of offsetLists) {
    for (let i = 1; i < offsets.length; i++) {
      const gap = offsets[i]! - offsets[i - 1]!;
      if (!Number.isFinite(gap)) continue;
      const bucket = bucketOf(gap);
      group.count(gap, bucket);
      run?.count(gap, bucket);
    }
  }
}

function gatherGaps(offsetLists: readonly ArrayLike<number>[], group: GapTally, run: GapTally | null): void {
  for (const offsets of offsetLists) {
    for (let i = 1; i < offsets.length; i++) {
      const gap = offsets[i]! - offsets[i - 1]!;
      if (!Number.isFinite(gap)) continue;
      const bucket = bucketOf(gap);
      group.gather(gap, bucket);
      run?.gather(gap, bucket);
    }
  }
}

const BUCKET_BITS = 18;
const BUCKETS = 1 << BUCKET_BITS;
/** Each percentile interpolates between two ranks: four percentiles need at most eight buckets. */
const MAX_WANTED_BUCKETS = 8;
const bits = new Float64Array(1);
const words = new Uint32Array(bits.buffer);
const HIGH_WORD = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1 ? 1 : 0;

/** The top BUCKET_BITS bits of the value's bits, reordered so that bucket order is numeric order. */
export function bucketOf(value: number): number {
  bits[0] = value;
  const high = words[HIGH_WORD]!;
  // A negative double's magnitude grows with its bits: all flipped, negatives fall below the positives in reverse.
  return (high >= 0x80000000 ? ~high : high ^ 0x80000000) >>> (32 - BUCKET_BITS);
}

class WholeTally implements GapTally {
  private readonly values: Float64Array;
  private n = 0;

  constructor(bound: number) {
    this.values = new Float64Array(bound);
  }

  count(gap: number): void {
    this.values[this.n++] = gap;
  }

  planGather(): boolean {
    return false;
  }

  gather(): void {}

  distribution(): Distribution {
    return summarizeInPlace(this.values.subarray(0, this.n));
  }
}

/** A bucket that holds wanted ranks: where its values start in the gathered array, and the rank of its least value. */
interface GatheredBucket {
  start: number;
  size: number;
  firstRank: number;
}

class BucketedTally implements GapTally {
  private n = 0;
  private sum = 0;
  private min = Number.POSITIVE_INFINITY;
  private max = Number.NEGATIVE_INFINITY;
  private mean = 0;
  private squares = 0;
  private readonly counts = new Uint32Array(BUCKETS);
  /** Per bucket, 1 + its index in `buckets`; 0 where the bucket is not gathered. */
  private readonly slots = new Uint8Array(BUCKETS);
  private readonly buckets: GatheredBucket[] = [];
  /** The gathered buckets' values, one after another; `cursors[slot]` is where the next value of a slot goes. */
  private gathered = new Float64Array(0);
  private readonly cursors = new Int32Array(1 + MAX_WANTED_BUCKETS);

  count(gap: number, bucket: number): void {
    this.n += 1;
    this.sum += gap;
    if (gap < this.min) this.min = gap;
    if (gap > this.max) this.max = gap;
    this.counts[bucket]! += 1;
  }

  planGather(): boolean {
    if (this.n === 0) return false;
    this.mean = this.sum / this.n;
    const ranks = [...new Set(percentileRanks(this.n))].sort((a, b) => a - b);
    let next = 0;
    let below = 0;
    let total = 0;
    for (let bucket = 0; bucket < BUCKETS && next < ranks.length; bucket++) {
      const size = this.counts[bucket]!;
      if (size === 0) continue;
      if (ranks[next]! < below + size) {
        this.buckets.push({ start: total, size, firstRank: below });
        this.slots[bucket] = this.buckets.length;
        this.cursors[this.buckets.length] = total;
        total += size;
        while (next < ranks.length && ranks[next]! < below + size) next += 1;
      }
      below += size;
    }
    this.gathered = new Float64Array(total);
    return true;
  }

  gather(gap: number, bucket: number): void {
    this.squares += (gap - this.mean) ** 2;
    const slot = this.slots[bucket]!;
    if (slot !== 0) this.gathered[this.cursors[slot]!++] = gap;
  }

  distribution(): Distribution {
    if (this.n === 0) return emptyDistribution();
    const ranks = percentileRanks(this.n);
    const valuesOf = (bucket: GatheredBucket) => this.gathered.subarray(bucket.start, bucket.start + bucket.size);
    for (const bucket of this.buckets) {
      const end = bucket.firstRank + bucket.size;
      selectRanks(
        valuesOf(bucket),
        ranks.filter((rank) => rank >= bucket.firstRank && rank < end).map((rank) => rank - bucket.firstRank),
      );
    }
    const orderStatistic = (rank: number) => {
      const bucket = this.buckets.find((entry) => rank >= entry.firstRank && rank < entry.firstRank + entry.size)!;
      return this.gathered[bucket.start + rank - bucket.firstRank]!;
    };
    return distributionOf({ n: this.n, mean: this.mean, squares: this.squares, min: this.min, max: this.max }, orderStatistic);
  }
}
