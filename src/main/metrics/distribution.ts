/** Summary statistics in the shape every report uses. `null` when n cannot support a value. */
export interface Distribution {
  n: number;
  mean: number | null;
  std: number | null;
  p50: number | null;
  p90: number | null;
  p95: number | null;
  p99: number | null;
  min: number | null;
  max: number | null;
}

/**
 * Percentile by linear interpolation between order statistics (NumPy's default "linear"
 * method): rank h = (n - 1) * q, value = x[floor h] + (h - floor h) * (x[ceil h] - x[floor h]).
 */
export function percentile(sorted: readonly number[], q: number): number | null {
  if (sorted.length === 0) return null;
  const rank = (sorted.length - 1) * q;
  const lower = Math.floor(rank);
  const upper = Math.ceil(rank);
  const low = sorted[lower]!;
  return low + (rank - lower) * (sorted[upper]! - low);
}

/** Sample standard deviation (n - 1); null below two samples. */
export function summarize(values: readonly number[]): Distribution {
  const finite = values.filter((value) => Number.isFinite(value));
  const n = finite.length;
  if (n === 0) return { n: 0, mean: null, std: null, p50: null, p90: null, p95: null, p99: null, min: null, max: null };
  const sorted = [...finite].sort((a, b) => a - b);
  const mean = sorted.reduce((sum, value) => sum + value, 0) / n;
  const std = n > 1 ? Math.sqrt(sorted.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (n - 1)) : null;
  return {
    n,
    mean,
    std,
    p50: percentile(sorted, 0.5),
    p90: percentile(sorted, 0.9),
    p95: percentile(sorted, 0.95),
    p99: percentile(sorted, 0.99),
    min: sorted[0]!,
    max: sorted[n - 1]!,
  };
}

/**
 * Whether a tail percentile rests on enough samples to mean anything: at least one sample
 * must lie beyond it, i.e. n >= 1 / (1 - q).
 */
export function percentileSupported(n: number, q: number): boolean {
  return n >= Math.ceil(1 / (1 - q));
}
