import type { Distribution, TailPercentile } from '../../shared/contract/runs';
import { PERCENTILE_MIN_N } from '../../shared/experiment-defaults';
import { selectRanks } from './order-statistics';

export type { Distribution, TailPercentile };

export const TAIL_PERCENTILES: readonly TailPercentile[] = ['p90', 'p95', 'p99'];

/** The tail percentiles a sample of n cannot support (none when n is 0: there is nothing to withhold). */
export function unsupportedPercentiles(n: number): TailPercentile[] {
  return n === 0 ? [] : TAIL_PERCENTILES.filter((label) => n < PERCENTILE_MIN_N[label]);
}

/**
 * Percentile by linear interpolation between order statistics (NumPy's default "linear"
 * method): rank h = (n - 1) * q, value = x[floor h] + (h - floor h) * (x[ceil h] - x[floor h]).
 */
export function percentile(sorted: ArrayLike<number>, q: number): number | null {
  if (sorted.length === 0) return null;
  return interpolatedPercentile(sorted.length, q, (rank) => sorted[rank]!);
}

/** The same percentile of n values, reading the order statistics it needs from `orderStatistic(rank)`. */
export function interpolatedPercentile(n: number, q: number, orderStatistic: (rank: number) => number): number {
  const rank = (n - 1) * q;
  const lower = Math.floor(rank);
  const low = orderStatistic(lower);
  return low + (rank - lower) * (orderStatistic(Math.ceil(rank)) - low);
}

/** The finite values, sorted. A typed array sorts numerically in native code: millions of samples stay fast. */
export function sortedFinite(values: ArrayLike<number>): Float64Array {
  return finiteCopy(values).sort();
}

/** The finite values, in their order, as a typed array the summary may rearrange. */
export function finiteCopy(values: ArrayLike<number>): Float64Array {
  const finite = new Float64Array(values.length);
  let n = 0;
  for (let i = 0; i < values.length; i++) {
    const value = values[i]!;
    if (Number.isFinite(value)) finite[n++] = value;
  }
  return finite.subarray(0, n);
}

/** Sample standard deviation (n - 1); null below two samples. Non-finite values are ignored. */
export function summarize(values: ArrayLike<number>): Distribution {
  return summarizeInPlace(finiteCopy(values));
}

const TAIL_QUANTILES: Record<TailPercentile, number> = { p90: 0.9, p95: 0.95, p99: 0.99 };

/**
 * Summary of finite values, in any order; rearranges them. A tail percentile below its
 * minimum n is null, listed in `unsupported`: from 19 samples "p95" is the interpolation
 * between the two largest, a number that says nothing about the 95th percentile of the
 * population. Percentiles are exact: the order statistics they interpolate are selected
 * (metrics/order-statistics.ts), not estimated.
 */
export function summarizeInPlace(finite: Float64Array): Distribution {
  const n = finite.length;
  if (n === 0) return emptyDistribution();
  let sum = 0;
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < n; i++) {
    const value = finite[i]!;
    sum += value;
    if (value < min) min = value;
    if (value > max) max = value;
  }
  const mean = sum / n;
  let squares = 0;
  for (let i = 0; i < n; i++) squares += (finite[i]! - mean) ** 2;
  selectRanks(finite, percentileRanks(n));
  return distributionOf({ n, mean, squares, min, max }, (rank) => finite[rank]!);
}

/** The summary of no values: every figure null. */
export function emptyDistribution(): Distribution {
  return { n: 0, mean: null, std: null, p50: null, p90: null, p95: null, p99: null, min: null, max: null, unsupported: [] };
}

/** The order statistics (0-based ranks) the reported percentiles of n values interpolate between. */
export function percentileRanks(n: number): number[] {
  const unsupported = unsupportedPercentiles(n);
  const quantiles = [0.5, ...TAIL_PERCENTILES.filter((label) => !unsupported.includes(label)).map((label) => TAIL_QUANTILES[label])];
  return quantiles.flatMap((q) => [Math.floor((n - 1) * q), Math.ceil((n - 1) * q)]);
}

/**
 * The summary of n > 0 values from their moments (the sum of squared deviations from the mean,
 * so the sample standard deviation divides by n - 1) and their order statistics at the ranks
 * `percentileRanks(n)` names.
 */
export function distributionOf(
  moments: { n: number; mean: number; squares: number; min: number; max: number },
  orderStatistic: (rank: number) => number,
): Distribution {
  const { n, mean, squares, min, max } = moments;
  const unsupported = unsupportedPercentiles(n);
  const tail = (label: TailPercentile) =>
    unsupported.includes(label) ? null : interpolatedPercentile(n, TAIL_QUANTILES[label], orderStatistic);
  return {
    n,
    mean,
    std: n > 1 ? Math.sqrt(squares / (n - 1)) : null,
    p50: interpolatedPercentile(n, 0.5, orderStatistic),
    p90: tail('p90'),
    p95: tail('p95'),
    p99: tail('p99'),
    min,
    max,
    unsupported,
  };
}

/**
 * Whether a tail percentile rests on enough samples to mean anything: at least one sample
 * must lie beyond it, i.e. n >= 1 / (1 - q) (the rule PERCENTILE_MIN_N writes out). The
 * tolerance keeps 1 / (1 - 0.9) = 10.000000000000002 from demanding 11.
 */
export function percentileSupported(n: number, q: number): boolean {
  return n >= Math.ceil(1 / (1 - q) - 1e-9);
}
