/**
 * Exact order statistics without a full sort. A run's inter-token gaps run to millions, and a
 * summary needs eight of their order statistics (the two neighbours of each percentile's rank),
 * not their order: selecting them costs about n·log₂(ranks) comparisons where a sort costs n·log₂ n.
 */

/** Below this many elements a range is sorted outright: selection's bookkeeping costs more than it saves. */
const SORT_BELOW = 48;

/**
 * Rearranges `values` in place so that `values[k]` holds the k-th smallest value for every k in
 * `ranks` (0-based), as it would after a sort. Other positions are left in no particular order.
 * Three-way partitions keep runs of equal values (timer-quantized gaps) linear; a range that
 * keeps partitioning badly is sorted, so the worst case stays n·log n.
 */
export function selectRanks(values: Float64Array, ranks: readonly number[]): void {
  const wanted = [...new Set(ranks)].filter((rank) => rank >= 0 && rank < values.length).sort((a, b) => a - b);
  if (wanted.length === 0) return;
  const depthLimit = 2 * Math.ceil(Math.log2(values.length + 1)) + 8;
  selectWithin(values, 0, values.length - 1, wanted, 0, wanted.length, depthLimit);
}

function selectWithin(values: Float64Array, lo: number, hi: number, ranks: number[], first: number, end: number, depth: number): void {
  while (first < end && lo < hi) {
    if (hi - lo < SORT_BELOW || depth <= 0) {
      values.subarray(lo, hi + 1).sort();
      return;
    }
    depth -= 1;
    const pivot = medianOfThree(values[lo]!, values[(lo + hi) >>> 1]!, values[hi]!);
    // Dutch-flag partition: [lo, less) < pivot, [less, greater] = pivot, (greater, hi] > pivot.
    let less = lo;
    let scan = lo;
    let greater = hi;
    while (scan <= greater) {
      const value = values[scan]!;
      if (value < pivot) {
        values[scan] = values[less]!;
        values[less] = value;
        less += 1;
        scan += 1;
      } else if (value > pivot) {
        values[scan] = values[greater]!;
        values[greater] = value;
        greater -= 1;
      } else scan += 1;
    }
    // Ranks in [less, greater] hold the pivot already; the rest go to their side.
    let leftEnd = first;
    while (leftEnd < end && ranks[leftEnd]! < less) leftEnd += 1;
    let rightStart = leftEnd;
    while (rightStart < end && ranks[rightStart]! <= greater) rightStart += 1;
    selectWithin(values, lo, less - 1, ranks, first, leftEnd, depth);
    lo = greater + 1;
    first = rightStart;
  }
}

function medianOfThree(a: number, b: number, c: number): number {
  if (a < b) return b < c ? b : a < c ? c : a;
  return a < c ? a : b < c ? c : b;
}
