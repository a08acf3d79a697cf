import { seededRandom } from '../core/random';
import { percentile, sortedFinite } from './distribution';
import { statisticOf, type Statistic } from './window-verdicts';

export type { Statistic };

/** Above this many samples per side, intervals come from order statistics instead of resampling. */
export const BOOTSTRAP_MAX_SAMPLES = 2000;

export const REQUEST_NOISE_ONLY =
  'request noise only: one window per run, so run-to-run drift is not in this interval and no faster/slower verdict is given; compare repeated windows in an experiment for one';
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
 * Difference B − A of a statistic between two single runs, with a 95 % interval of the
 * request-to-request noise only: a percentile bootstrap (resampling each side's requests
 * with replacement) for samples up to BOOTSTRAP_MAX_SAMPLES, and for larger ones the
 * order-statistic interval of each side combined as independent normal errors (the
 * bootstrap's answer at that size, in a fraction of the time). One run is one window: the
 * interval cannot see run-to-run drift, so it carries no faster/slower verdict — that needs
 * repeated windows (window-verdicts.ts). The verdict is `insufficient data` with that note.
 */
export function bootstrapDifference(
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  statistic: Statistic,
  options: { iterations?: number; seed?: number } = {},
): {
  a: number | null;
  b: number | null;
  difference: number | null;
  ci: [number, number] | null;
  verdict: 'insufficient data';
  note: string;
} {
  return bootstrapDifferenceOfSorted(sortedFinite(a), sortedFinite(b), statistic, options);
}

/** `bootstrapDifference` of samples already finite and ascending (a caller comparing many runs sorts each once). */
export function bootstrapDifferenceOfSorted(
  sortedA: Float64Array,
  sortedB: Float64Array,
  statistic: Statistic,
  options: { iterations?: number; seed?: number } = {},
): ReturnType<typeof bootstrapDifference> {
  const valueA = statisticOf(sortedA, statistic);
  const valueB = statisticOf(sortedB, statistic);
  if (valueA === null || valueB === null || sortedA.length < 2 || sortedB.length < 2) {
    return {
      a: valueA,
      b: valueB,
      difference: valueA === null || valueB === null ? null : valueB - valueA,
      ci: null,
      verdict: 'insufficient data',
      note: 'fewer than two requests on a side',
    };
  }
  const note = REQUEST_NOISE_ONLY;
  if (sortedA.length > BOOTSTRAP_MAX_SAMPLES && sortedB.length > BOOTSTRAP_MAX_SAMPLES) {
    const difference = valueB - valueA;
    const halfWidth = Z95 * Math.hypot(standardError(sortedA, statistic), standardError(sortedB, statistic));
    const ci: [number, number] = [difference - halfWidth, difference + halfWidth];
    return { a: valueA, b: valueB, difference, ci, verdict: 'insufficient data', note };
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
  return { a: valueA, b: valueB, difference: valueB - valueA, ci, verdict: 'insufficient data', note };
}
