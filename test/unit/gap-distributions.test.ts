import { describe, expect, it } from 'vitest';
import { summarize } from '../../src/main/metrics/distribution';
import { bucketOf, gapDistributions } from '../../src/main/metrics/gap-distributions';
import { seededRandom } from '../../src/main/core/random';

/** The gaps of each request's offsets, laid end to end: what the summary was computed from before streaming. */
function gapsOf(offsetLists: readonly ArrayLike<number>[]): number[] {
  const gaps: number[] = [];
  for (const offsets of offsetLists) for (let i = 1; i < offsets.length; i++) gaps.push(offsets[i]! - offsets[i - 1]!);
  return gaps;
}

// Constructed streams shaped like real ones: jittered decode steps with rare stalls, timer-quantized
// arrival (every gap one of a few values), bursts of zero gaps (chunks read together), offsets
// that go backwards (a clock step), and broken offsets (NaN, Infinity) a failed parse leaves.
function request(shape: number, chunks: number, random: () => number): Float64Array {
  const offsets = new Float64Array(chunks);
  let at = 10 + random() * 100;
  for (let i = 0; i < chunks; i++) {
    switch (shape) {
      case 0:
        at += 1 + random() * (random() < 0.01 ? 40 : 1);
        break;
      case 1:
        at += [0, 15.625, 31.25][Math.floor(random() * 3)]!;
        break;
      case 2:
        at += random() < 0.7 ? 0 : 20 + random();
        break;
      case 3:
        at += random() < 0.02 ? -5 * random() : 0.2 + random() * 1e-3;
        break;
      default:
        at = random() < 0.01 ? Number.NaN : random() < 0.01 ? Number.POSITIVE_INFINITY : at + 3 * random();
    }
    offsets[i] = at;
  }
  return offsets;
}

function groupOf(shape: number, requests: number, chunks: number, random: () => number): Float64Array[] {
  return Array.from({ length: requests }, () => request(shape, Math.floor(random() * chunks), random));
}

describe('ITL distributions streamed from chunk offsets', () => {
  it('equal summarize of the gaps laid end to end, for each group and the run, small and large', () => {
    const random = seededRandom(31);
    for (let trial = 0; trial < 12; trial++) {
      // Large trials pass the whole-gather limit (65,536 gaps), so their groups take the bucketed path.
      const large = trial % 3 === 0;
      const groups = Array.from({ length: 1 + (trial % 4) }, (_, index) =>
        groupOf((trial + index) % 5, large ? 800 : 30 + Math.floor(random() * 60), large ? 400 : 40, random),
      );
      const streamed = gapDistributions(groups);
      groups.forEach((group, index) => expect(streamed.groups[index], `trial ${trial} group ${index}`).toEqual(summarize(gapsOf(group))));
      expect(streamed.run, `trial ${trial} run`).toEqual(summarize(groups.flatMap(gapsOf)));
    }
  });

  it('stays exact when every gap falls in one bucket, when a group is empty, and below the n a percentile needs', () => {
    const evenSteps = [Float64Array.from({ length: 100_000 }, (_, i) => i * 16.5)];
    const cases: Float64Array[][][] = [
      [evenSteps],
      [[], evenSteps, [Float64Array.of(5)]],
      [[Float64Array.of(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048)]],
      [[Float64Array.of(Number.NaN, Number.NaN)], []],
    ];
    for (const groups of cases) {
      const streamed = gapDistributions(groups);
      groups.forEach((group, index) => expect(streamed.groups[index]).toEqual(summarize(gapsOf(group))));
      expect(streamed.run).toEqual(summarize(groups.flatMap(gapsOf)));
    }
  });

  it('orders buckets as the numbers they hold, negatives and subnormals included', () => {
    const values = [-1e308, -2, -1.5, -1e-310, 0, 5e-324, 1e-300, 1, 1.0625, 1.5, 2, 3e9, 1e308];
    const buckets = values.map(bucketOf);
    for (let i = 1; i < values.length; i++)
      expect(buckets[i]!, `${values[i - 1]} then ${values[i]}`).toBeGreaterThanOrEqual(buckets[i - 1]!);
    expect(bucketOf(1)).not.toBe(bucketOf(1.0625));
  });

  it('the comparison catches order statistics read from the buckets without selecting within them', () => {
    // A deliberately wrong procedure: the first gathered value of a bucket taken as its k-th smallest.
    const random = seededRandom(5);
    const group = groupOf(0, 800, 400, random);
    const gaps = gapsOf(group);
    const exact = summarize(gaps);
    const sorted = Float64Array.from(gaps).sort();
    const firstInBucket = (rank: number) => gaps.find((gap) => bucketOf(gap) === bucketOf(sorted[rank]!))!;
    const rank = Math.floor((gaps.length - 1) * 0.5);
    expect(firstInBucket(rank)).not.toBe(sorted[rank]);
    expect(gapDistributions([group]).run.p50).toBe(exact.p50);
  });
});
