import type { RegressionDecision } from '../../shared/contract/check';
import { studentTQuantile } from './student-t';

/**
 * Is the candidate worse than the baseline by more than the margin, beyond doubt? Each window
 * (one run) gives one value of the statistic; the test is a one-sided pooled two-sample t test
 * on their logarithms, so the margin is relative and windows are the unit of replication. A
 * baseline of one run borrows the spread between windows from the candidate's windows (equal
 * spread assumed), which is why the candidate is rerun in several windows. A regression is
 * declared only when the whole one-sided interval lies beyond the margin: a CI gate that fails a
 * build must not do so on noise, and a small slowdown inside the margin is accepted by design.
 */
export function regressionDecision(input: {
  baseline: readonly number[];
  candidate: readonly number[];
  /** Relative margin: 0.05 accepts anything up to 5 % worse. */
  margin: number;
  /** One-sided error rate of this metric's decision (already divided among the metrics). */
  alpha: number;
  higherIsBetter?: boolean;
}): RegressionDecision {
  const usable = (values: readonly number[]) => values.filter((value) => Number.isFinite(value) && value > 0).map(Math.log);
  const a = usable(input.baseline);
  const b = usable(input.candidate);
  if (a.length === 0 || b.length === 0)
    return { ratio: null, worse_by_at_least: null, verdict: 'insufficient data', note: 'a side has no window with a value' };
  const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
  const [meanA, meanB] = [mean(a), mean(b)];
  // Worse is larger for latencies, smaller for throughput: the sign makes "worse" positive.
  const worse = input.higherIsBetter ? meanA - meanB : meanB - meanA;
  const ratio = Math.exp(meanB - meanA);
  const df = a.length + b.length - 2;
  if (df < 1)
    return {
      ratio,
      worse_by_at_least: null,
      verdict: 'insufficient data',
      note: `${a.length} + ${b.length} windows give no estimate of the spread between windows; rerun the candidate in 2 or more (--repeats)`,
    };
  const squares = (values: number[], center: number) => values.reduce((sum, value) => sum + (value - center) ** 2, 0);
  const pooledSd = Math.sqrt((squares(a, meanA) + squares(b, meanB)) / df);
  const standardError = pooledSd * Math.sqrt(1 / a.length + 1 / b.length);
  const lowerBound = worse - studentTQuantile(1 - input.alpha, df) * standardError;
  const worseByAtLeast = Math.exp(lowerBound) - 1;
  const regression = lowerBound > Math.log(1 + input.margin);
  return {
    ratio,
    worse_by_at_least: worseByAtLeast,
    verdict: regression ? 'regression' : 'pass',
    note: regression ? null : worse > Math.log(1 + input.margin) ? 'worse than the margin on average, but not beyond doubt' : null,
  };
}
