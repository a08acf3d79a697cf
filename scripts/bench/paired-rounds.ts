import { percentile, sortedFinite } from '../../src/main/metrics/distribution';
import { studentTQuantile } from '../../src/main/metrics/student-t';

/**
 * One round's figure for the client-overhead comparison: the median of its paired differences
 * (Infer Lab's request less the minimal client's request sent next to it by the same worker).
 * Pairing cancels most of what the server's state adds to both; the median keeps a stalled
 * request from moving it.
 */
export function roundPairedMedian(pairDifferences: readonly number[]): number | null {
  return percentile(sortedFinite(Float64Array.from(pairDifferences)), 0.5);
}

export interface RoundsInterval {
  rounds: number;
  mean: number;
  sd: number;
  low: number;
  high: number;
}

/**
 * The mean of the per-round figures with its two-sided t interval. Rounds are the independent
 * units: requests in one round share the server's state (its batch, its slots), so an interval
 * over the requests themselves is too narrow (test/unit/bench-rounds-simulation.test.ts).
 */
export function roundsInterval(perRound: readonly number[], level = 0.95): RoundsInterval | null {
  const rounds = perRound.length;
  if (rounds < 2) return null;
  const mean = perRound.reduce((sum, value) => sum + value, 0) / rounds;
  const sd = Math.sqrt(perRound.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (rounds - 1));
  const half = studentTQuantile(1 - (1 - level) / 2, rounds - 1) * (sd / Math.sqrt(rounds));
  return { rounds, mean, sd, low: mean - half, high: mean + half };
}

/** How many rounds an interval of ± `halfWidth` needs at the spread `sd` seen between rounds (normal approximation). */
export function roundsForHalfWidth(sd: number, halfWidth: number): number {
  return Math.ceil(((1.96 * sd) / halfWidth) ** 2);
}
