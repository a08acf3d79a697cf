import type { Verdict } from '../../shared/contract/compare';
import { seededRandom } from '../models/random';
import { percentile, sortedFinite } from './distribution';

export type Statistic = 'p50' | 'p95' | 'mean';

function statisticOf(values: Float64Array, statistic: Statistic): number | null {
  if (values.length === 0) return null;
  if (statistic === 'mean') return values.reduce((sum, value) => sum + value, 0) / values.length;
  return percentile(values, statistic === 'p50' ? 0.5 : 0.95);
}

/**
 * Difference B − A of a statistic with a percentile-bootstrap 95 % interval (resampling
 * each side's requests with replacement). The verdict is only "faster"/"slower" when the
 * whole interval is on one side of zero; otherwise the difference is inside the noise.
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
  const lowerIsBetter = options.lowerIsBetter ?? true;
  let verdict: Verdict = 'no significant difference';
  if (ci[1] < 0) verdict = lowerIsBetter ? 'faster' : 'slower';
  else if (ci[0] > 0) verdict = lowerIsBetter ? 'slower' : 'faster';
  return { a: valueA, b: valueB, difference: valueB - valueA, ci, verdict };
}
