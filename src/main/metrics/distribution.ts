import type { Distribution, TailPercentile } from '../../shared/contract/runs';
import { PERCENTILE_MIN_N } from '../../shared/experiment-defaults';

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
  const rank = (sorted.length - 1) * q;
  const lower = Math.floor(rank);
  const upper = Math.ceil(rank);
  const low = sorted[lower]!;
  return low + (rank - lower) * (sorted[upper]! - low);
}

/** The finite values, sorted. A typed array sorts numerically in native code: millions of samples stay fast. */
export function sortedFinite(values: ArrayLike<number>): Float64Array {
  const sorted = new Float64Array(values.length);
  let n = 0;
  for (let i = 0; i < values.length; i++) {
    const value = values[i]!;
    if (Number.isFinite(value)) sorted[n++] = value;
  }
  return sorted.subarray(0, n).sort();
}

/** Merges ascending arrays into one ascending array in linear time. */
export function mergeSorted(parts: readonly Float64Array[]): Float64Array {
  const merged = new Float64Array(parts.reduce((sum, part) => sum + part.length, 0));
  const heads = parts.map(() => 0);
  for (let out = 0; out < merged.length; out++) {
    let best = -1;
    for (let p = 0; p < parts.length; p++) {
      if (heads[p]! < parts[p]!.length && (best < 0 || parts[p]![heads[p]!]! < parts[best]![heads[best]!]!)) best = p;
    }
    merged[out] = parts[best]![heads[best]!++]!;
  }
  return merged;
}

/** Sample standard deviation (n - 1); null below two samples. Non-finite values are ignored. */
export function summarize(values: ArrayLike<number>): Distribution {
  return summarizeSorted(sortedFinite(values));
}

/**
 * Summary of ascending finite values. A tail percentile below its minimum n is null, listed
 * in `unsupported`: from 19 samples "p95" is the interpolation between the two largest, a
 * number that says nothing about the 95th percentile of the population.
 */
export function summarizeSorted(finite: Float64Array): Distribution {
  const n = finite.length;
  if (n === 0) return { n: 0, mean: null, std: null, p50: null, p90: null, p95: null, p99: null, min: null, max: null, unsupported: [] };
  let sum = 0;
  for (let i = 0; i < n; i++) sum += finite[i]!;
  const mean = sum / n;
  let squares = 0;
  for (let i = 0; i < n; i++) squares += (finite[i]! - mean) ** 2;
  const std = n > 1 ? Math.sqrt(squares / (n - 1)) : null;
  const unsupported = unsupportedPercentiles(n);
  const tail = (label: TailPercentile, q: number) => (unsupported.includes(label) ? null : percentile(finite, q));
  return {
    n,
    mean,
    std,
    p50: percentile(finite, 0.5),
    p90: tail('p90', 0.9),
    p95: tail('p95', 0.95),
    p99: tail('p99', 0.99),
    min: finite[0]!,
    max: finite[n - 1]!,
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
