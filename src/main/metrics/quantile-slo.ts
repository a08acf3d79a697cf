import { regularizedBeta } from './student-t';

/**
 * Does a load meet "the p-th percentile of a latency is at most L"? That holds exactly when
 * the share of requests above L (the exceedance) is at most q = 1 − p/100, so each request is
 * a Bernoulli trial and the decision is an exact one-sided binomial test on the count of
 * requests above the limit:
 *
 * - meets:  P(K ≤ k | n, q) ≤ α, i.e. this few violations would be rare were the exceedance q or more;
 * - misses: P(K ≥ k | n, q) ≤ α, i.e. this many would be rare were it q or less;
 * - otherwise the requests cannot tell, and more are needed.
 *
 * A request that failed counts as above every limit: it did not meet the SLO.
 */
export type QuantileDecision = 'meets' | 'misses' | 'inconclusive';

/** P(K ≤ k) for K ~ Binomial(n, q). */
export function binomialCdf(k: number, n: number, q: number): number {
  if (k < 0) return 0;
  if (k >= n) return 1;
  if (q <= 0) return 1;
  if (q >= 1) return 0;
  return regularizedBeta(1 - q, n - k, k + 1);
}

export function decideQuantile(
  violations: number,
  n: number,
  percentile: number,
  alphaMeets: number,
  alphaMisses: number,
): QuantileDecision {
  const q = 1 - percentile / 100;
  if (n === 0) return 'inconclusive';
  if (binomialCdf(violations, n, q) <= alphaMeets) return 'meets';
  if (1 - binomialCdf(violations - 1, n, q) <= alphaMisses) return 'misses';
  return 'inconclusive';
}

/** The fewest requests with which a load can be shown to meet the percentile at all (none above the limit). */
export function minimumRequestsToMeet(percentile: number, alpha: number): number {
  const q = 1 - percentile / 100;
  return Math.ceil(Math.log(alpha) / Math.log(1 - q));
}

/** The p-th percentile of `values` by the nearest-rank rule (the value with at least p % at or below it). */
export function nearestRankPercentile(values: readonly number[], percentile: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((percentile / 100) * sorted.length) - 1))]!;
}
