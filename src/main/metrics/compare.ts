import { BOOTSTRAP_MAX_SAMPLES, REQUEST_NOISE_ONLY } from '../../shared/contract/compare';
import { seededRandom } from '../core/random';
import { percentile, sortedFinite } from './distribution';
import { statisticOf, type Statistic } from './window-verdicts';

export type { Statistic };

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
  const seed = options.seed ?? 12345;
  return differenceOfSamples(
    new BootstrapSample(sortedA, { iterations: options.iterations, seed }),
    new BootstrapSample(sortedB, { iterations: options.iterations, seed: seed + 1 }),
    statistic,
  );
}

/**
 * One side of request-noise comparisons: an ascending sample and its bootstrap statistics, resampled
 * once on first use however many comparisons and statistics read them (Compare sets each run against
 * the first for every latency row). Samples set against each other need different seeds: two sides
 * resampled at the same indices move together, and their interval comes out too narrow
 * (test/unit/compare-interval-simulation.test.ts).
 */
export class BootstrapSample {
  private resampled: Record<Statistic, Float64Array> | null = null;

  constructor(
    readonly sorted: Float64Array,
    private readonly options: { iterations?: number; seed: number },
  ) {}

  /** Each statistic of each resample, in resample order. */
  resamples(): Record<Statistic, Float64Array> {
    this.resampled ??= resampledStatistics(this.sorted, this.options.iterations ?? 1000, seededRandom(this.options.seed));
    return this.resampled;
  }
}

/** B − A of a statistic, with the request-noise interval: order statistics above BOOTSTRAP_MAX_SAMPLES a side, else the bootstrap. */
export function differenceOfSamples(a: BootstrapSample, b: BootstrapSample, statistic: Statistic): ReturnType<typeof bootstrapDifference> {
  const valueA = statisticOf(a.sorted, statistic);
  const valueB = statisticOf(b.sorted, statistic);
  if (valueA === null || valueB === null || a.sorted.length < 2 || b.sorted.length < 2) {
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
  const difference = valueB - valueA;
  if (a.sorted.length > BOOTSTRAP_MAX_SAMPLES && b.sorted.length > BOOTSTRAP_MAX_SAMPLES) {
    const halfWidth = Z95 * Math.hypot(standardError(a.sorted, statistic), standardError(b.sorted, statistic));
    return { a: valueA, b: valueB, difference, ci: [difference - halfWidth, difference + halfWidth], verdict: 'insufficient data', note };
  }
  const fromA = a.resamples()[statistic];
  const fromB = b.resamples()[statistic];
  const differences = new Float64Array(Math.min(fromA.length, fromB.length));
  for (let i = 0; i < differences.length; i++) differences[i] = fromB[i]! - fromA[i]!;
  differences.sort();
  const ci: [number, number] = [percentile(differences, 0.025)!, percentile(differences, 0.975)!];
  return { a: valueA, b: valueB, difference, ci, verdict: 'insufficient data', note };
}

/**
 * Every statistic of `iterations` bootstrap resamples of an ascending sample. Each draw picks an
 * index; since the source is ascending, writing each value as often as its index was drawn gives
 * the resample sorted without a comparison sort: O(n) a resample rather than O(n log n).
 */
function resampledStatistics(source: Float64Array, iterations: number, random: () => number): Record<Statistic, Float64Array> {
  const n = source.length;
  const drawn = new Uint32Array(n);
  const resample = new Float64Array(n);
  const statistics = { p50: new Float64Array(iterations), p95: new Float64Array(iterations), mean: new Float64Array(iterations) };
  for (let iteration = 0; iteration < iterations; iteration++) {
    drawn.fill(0);
    for (let i = 0; i < n; i++) drawn[Math.floor(random() * n)]! += 1;
    let at = 0;
    let sum = 0;
    for (let index = 0; index < n; index++) {
      const value = source[index]!;
      const times = drawn[index]!;
      sum += value * times;
      for (let end = at + times; at < end; at++) resample[at] = value;
    }
    statistics.p50[iteration] = percentile(resample, 0.5)!;
    statistics.p95[iteration] = percentile(resample, 0.95)!;
    statistics.mean[iteration] = sum / n;
  }
  return statistics;
}
