import { gaussian, seededRandom } from '../core/random';
import { normalQuantile } from './normal-quantile';
import { studentTUpperTail } from './student-t';

/**
 * The boundaries of a group-sequential comparison of windows. After each round the two-sample t on
 * the windows so far is turned into the z with the same tail (so a look at 3 windows and one at 6
 * weigh alike), scaled by √(n / N) — an O'Brien–Fleming shape, which spends almost nothing at the
 * early looks and leaves the last nearly at the fixed design's level — and the running maximum of
 * that statistic over the looks is compared with its distribution under no difference.
 *
 * That distribution is simulated once per design (seeded, so every machine draws the same
 * boundaries) from normal per-window statistics, the same assumption the fixed design's t test
 * makes; the t statistic does not depend on the windows' scale, so the one simulation serves
 * every metric. A p-value read from it is valid at whatever look the experiment stops, and Holm's
 * procedure over such p-values keeps the family-wise error across all looks and all comparisons.
 */
export interface LookPlan {
  /** The windows per side at each look, ascending; the last is the most the experiment runs. */
  looks: readonly number[];
}

/** The last look: the most windows per side. */
export const lastLook = (plan: LookPlan): number => plan.looks[plan.looks.length - 1]!;

export type Sidedness = 'two-sided' | 'one-sided';

/** Simulated experiments per design: a p-value resolves to 1/40,001, enough for α/100. */
const NULL_PATHS = 40_000;
const NULL_SEED = 0x5e9a11;

/** The z with the same upper tail as Student's t at `df` degrees of freedom. */
export function zOfT(t: number, df: number): number {
  if (t < 0) return -zOfT(-t, df);
  const tail = studentTUpperTail(t, df);
  return tail <= 0 ? Number.POSITIVE_INFINITY : -normalQuantile(tail);
}

/** The statistic a look contributes: its z weighted by the share of the windows seen. */
export function lookStatistic(z: number, windows: number, plan: LookPlan): number {
  return z * Math.sqrt(windows / lastLook(plan));
}

const nullMaxima = new Map<string, Record<Sidedness, Float64Array>>();

function simulateNullMaxima(plan: LookPlan): Record<Sidedness, Float64Array> {
  const normal = gaussian(seededRandom(NULL_SEED));
  const twoSided = new Float64Array(NULL_PATHS);
  const oneSided = new Float64Array(NULL_PATHS);
  for (let path = 0; path < NULL_PATHS; path++) {
    let sumA = 0;
    let sumB = 0;
    let squaresA = 0;
    let squaresB = 0;
    let maxTwo = Number.NEGATIVE_INFINITY;
    let maxOne = Number.NEGATIVE_INFINITY;
    let look = 0;
    for (let n = 1; n <= lastLook(plan); n++) {
      const a = normal();
      const b = normal();
      sumA += a;
      sumB += b;
      squaresA += a * a;
      squaresB += b * b;
      if (n !== plan.looks[look]) continue;
      look += 1;
      const pooledVariance = (squaresA - (sumA * sumA) / n + squaresB - (sumB * sumB) / n) / (2 * n - 2);
      const t = (sumB / n - sumA / n) / Math.sqrt((pooledVariance * 2) / n);
      const statistic = lookStatistic(zOfT(t, 2 * n - 2), n, plan);
      maxOne = Math.max(maxOne, statistic);
      maxTwo = Math.max(maxTwo, Math.abs(statistic));
    }
    twoSided[path] = maxTwo;
    oneSided[path] = maxOne;
  }
  return { 'two-sided': twoSided.sort(), 'one-sided': oneSided.sort() };
}

function maximaOf(plan: LookPlan, sided: Sidedness): Float64Array {
  const ascending = plan.looks.every((windows, index) => index === 0 || windows > plan.looks[index - 1]!);
  if (plan.looks.length === 0 || !ascending || !plan.looks.every((windows) => Number.isInteger(windows) && windows >= 2))
    throw new Error(`a sequential design needs ascending looks of at least 2 whole windows (got ${plan.looks.join(', ')})`);
  const key = plan.looks.join('/');
  let maxima = nullMaxima.get(key);
  if (!maxima) {
    maxima = simulateNullMaxima(plan);
    nullMaxima.set(key, maxima);
  }
  return maxima[sided];
}

/** The first index whose value is at least `value` (the sorted array's length when none is). */
function firstAtLeast(sorted: Float64Array, value: number): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (sorted[middle]! < value) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** P(running maximum ≥ observed) with no difference, counting the observation itself (never 0). */
export function sequentialPValue(plan: LookPlan, observedMaximum: number, sided: Sidedness): number {
  const sorted = maximaOf(plan, sided);
  return (1 + sorted.length - firstAtLeast(sorted, observedMaximum)) / (sorted.length + 1);
}

/**
 * The look statistic a decision must exceed at level α: the largest simulated maximum whose p-value
 * is above α, so a statistic is above it exactly when its p-value is at most α, and an interval drawn
 * at it excludes zero exactly then. Infinite where α is finer than the simulation resolves, so
 * nothing is decided on a guess.
 */
export function sequentialBoundary(plan: LookPlan, alpha: number, sided: Sidedness): number {
  const sorted = maximaOf(plan, sided);
  // At most c simulated maxima may lie at or above a decided statistic: (1 + c) / (N + 1) ≤ α.
  const atOrAbove = Math.floor(alpha * (sorted.length + 1) + 1e-9) - 1;
  if (atOrAbove < 1) return Number.POSITIVE_INFINITY;
  return sorted[sorted.length - atOrAbove - 1]!;
}

/** The z at which a look of `windows` windows meets the boundary. */
export function boundaryZ(plan: LookPlan, boundary: number, windows: number): number {
  return boundary / Math.sqrt(windows / lastLook(plan));
}
