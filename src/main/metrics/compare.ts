import type { Verdict } from '../../shared/contract/compare';
import { seededRandom } from '../models/random';
import { percentile, sortedFinite } from './distribution';

export type Statistic = 'p50' | 'p95' | 'mean';

function statisticOf(values: Float64Array, statistic: Statistic): number | null {
  if (values.length === 0) return null;
  if (statistic === 'mean') return values.reduce((sum, value) => sum + value, 0) / values.length;
  return percentile(values, statistic === 'p50' ? 0.5 : 0.95);
}

/** Above this many samples per side, intervals come from order statistics instead of resampling. */
export const BOOTSTRAP_MAX_SAMPLES = 2000;
const Z95 = 1.959964;

/** Standard error of a quantile (or mean) from the distribution-free order-statistic interval. */
function standardError(sorted: Float64Array, statistic: Statistic): number {
  const n = sorted.length;
  if (statistic === 'mean') {
    const mean = sorted.reduce((sum, value) => sum + value, 0) / n;
    return Math.sqrt(sorted.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (n - 1) / n);
  }
  const p = statistic === 'p50' ? 0.5 : 0.95;
  const spread = Z95 * Math.sqrt(n * p * (1 - p));
  const lower = Math.max(0, Math.floor(n * p - spread));
  const upper = Math.min(n - 1, Math.ceil(n * p + spread));
  return (sorted[upper]! - sorted[lower]!) / (2 * Z95);
}

/**
 * Difference B − A of a statistic with a 95 % interval: a percentile bootstrap (resampling
 * each side's requests with replacement) for samples up to BOOTSTRAP_MAX_SAMPLES, and for
 * larger ones the order-statistic interval of each side combined as independent normal
 * errors (the bootstrap's answer at that size, in a fraction of the time). The verdict is
 * only "faster"/"slower" when the whole interval is on one side of zero.
 */
export function bootstrapDifference(
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  statistic: Statistic,
  options: { iterations?: number; seed?: number; lowerIsBetter?: boolean } = {},
): { a: number | null; b: number | null; difference: number | null; ci: [number, number] | null; verdict: Verdict } {
  const sortedA = sortedFinite(a);
  const sortedB = sortedFinite(b);
  const valueA = statisticOf(sortedA, statistic);
  const valueB = statisticOf(sortedB, statistic);
  if (valueA === null || valueB === null || sortedA.length < 2 || sortedB.length < 2) {
    return { a: valueA, b: valueB, difference: valueA === null || valueB === null ? null : valueB - valueA, ci: null, verdict: 'insufficient data' };
  }
  const lowerIsBetter = options.lowerIsBetter ?? true;
  const verdictFor = (ci: [number, number]): Verdict => {
    if (ci[1] < 0) return lowerIsBetter ? 'faster' : 'slower';
    if (ci[0] > 0) return lowerIsBetter ? 'slower' : 'faster';
    return 'no significant difference';
  };
  if (sortedA.length > BOOTSTRAP_MAX_SAMPLES && sortedB.length > BOOTSTRAP_MAX_SAMPLES) {
    const difference = valueB - valueA;
    const halfWidth = Z95 * Math.hypot(standardError(sortedA, statistic), standardError(sortedB, statistic));
    const ci: [number, number] = [difference - halfWidth, difference + halfWidth];
    return { a: valueA, b: valueB, difference, ci, verdict: verdictFor(ci) };
  }
  const iterations = options.iterations ?? 1000;
  const random = seededRandom(options.seed ?? 12345);
  const resample = (source: Float64Array, target: Float64Array) => {
    for (let i = 0; i < target.length; i++) target[i] = source[Math.floor(random() * source.length)]!;
    return statisticOf(target.sort(), statistic)!;
  };
  const bufferA = new Float64Array(sortedA.length);
  const bufferB = new Float64Array(sortedB.length);
  const differences = new Float64Array(iterations);
  for (let i = 0; i < iterations; i++) differences[i] = resample(sortedB, bufferB) - resample(sortedA, bufferA);
  differences.sort();
  const ci: [number, number] = [percentile(differences, 0.025)!, percentile(differences, 0.975)!];
  return { a: valueA, b: valueB, difference: valueB - valueA, ci, verdict: verdictFor(ci) };
}

/**
 * Difference B − A over repeated windows: a two-level bootstrap that resamples windows,
 * then requests within each chosen window, so run-to-run drift widens the interval instead
 * of hiding in a pool of requests. With one window per side it is the request bootstrap.
 */
export function windowedBootstrapDifference(
  aWindows: ArrayLike<number>[],
  bWindows: ArrayLike<number>[],
  statistic: Statistic,
  options: { iterations?: number; seed?: number; lowerIsBetter?: boolean } = {},
): ReturnType<typeof bootstrapDifference> {
  const pooled = (windows: ArrayLike<number>[]) => windows.flatMap((window) => Array.from(window));
  const flatA = pooled(aWindows);
  const flatB = pooled(bWindows);
  if (aWindows.length < 2 && bWindows.length < 2) return bootstrapDifference(flatA, flatB, statistic, options);
  const pointA = statisticOf(sortedFinite(flatA), statistic);
  const pointB = statisticOf(sortedFinite(flatB), statistic);
  if (pointA === null || pointB === null) return bootstrapDifference(flatA, flatB, statistic, options);
  const random = seededRandom(options.seed ?? 54321);
  // Big windows are thinned for the resampling only: the interval, not the point estimate.
  const cap = (window: ArrayLike<number>) => {
    const values = sortedFinite(window);
    if (values.length <= 500) return values;
    return Float64Array.from({ length: 500 }, (_, i) => values[Math.floor((i * (values.length - 1)) / 499)]!);
  };
  const windowsA = aWindows.map(cap).filter((window) => window.length > 0);
  const windowsB = bWindows.map(cap).filter((window) => window.length > 0);
  const resample = (windows: Float64Array[]) => {
    const chosen = windows.map(() => windows[Math.floor(random() * windows.length)]!);
    const total = chosen.reduce((sum, window) => sum + window.length, 0);
    const values = new Float64Array(total);
    let filled = 0;
    for (const window of chosen) for (let i = 0; i < window.length; i++) values[filled++] = window[Math.floor(random() * window.length)]!;
    return statisticOf(values.sort(), statistic)!;
  };
  const iterations = options.iterations ?? 1000;
  const differences = new Float64Array(iterations);
  for (let i = 0; i < iterations; i++) differences[i] = resample(windowsB) - resample(windowsA);
  differences.sort();
  const ci: [number, number] = [percentile(differences, 0.025)!, percentile(differences, 0.975)!];
  const lowerIsBetter = options.lowerIsBetter ?? true;
  const verdict: Verdict = ci[1] < 0 ? (lowerIsBetter ? 'faster' : 'slower') : ci[0] > 0 ? (lowerIsBetter ? 'slower' : 'faster') : 'no significant difference';
  return { a: pointA, b: pointB, difference: pointB - pointA, ci, verdict };
}
