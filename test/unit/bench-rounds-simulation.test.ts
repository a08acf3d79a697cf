import { describe, expect, it } from 'vitest';
import { gaussian, seededRandom } from '../../src/main/core/random';
import { sortedFinite } from '../../src/main/metrics/distribution';
import { roundPairedMedian, roundsForHalfWidth, roundsInterval } from '../../scripts/bench/paired-rounds';

/**
 * Simulated overhead rounds: each round has its own offset between the two clients (how the
 * server's batch happened to line up with each, sd `roundSd`), and each pair a heavy-tailed
 * difference of its own (a normal scaled by a log-normal: now and then a request stalls). The
 * true difference is `delta`.
 */
function simulatedRounds(random: () => number, design: { delta: number; rounds: number; pairs: number; roundSd: number }): number[][] {
  const normal = gaussian(random);
  return Array.from({ length: design.rounds }, () => {
    const offset = design.roundSd * normal();
    return Array.from({ length: design.pairs }, () => design.delta + offset + normal() * Math.exp(0.8 * normal()));
  });
}

/** The wrong procedure: every pair of every round taken as independent, a sign-test interval for their median. */
function pooledPairsInterval(rounds: number[][]): { low: number; high: number } {
  const all = sortedFinite(Float64Array.from(rounds.flat()));
  const n = all.length;
  const k = Math.floor(n / 2 - (1.96 * Math.sqrt(n)) / 2);
  return { low: all[Math.max(0, k)]!, high: all[Math.min(n - 1, n - 1 - k)]! };
}

const TRIALS = 2000;

describe('client-overhead rounds, simulated', () => {
  const design = { delta: 0.3, rounds: 6, pairs: 224, roundSd: 2 };

  it('the t interval over per-round paired medians covers the true difference 95 % of the time', () => {
    const random = seededRandom(41);
    let covered = 0;
    for (let trial = 0; trial < TRIALS; trial++) {
      const perRound = simulatedRounds(random, design).map((pairs) => roundPairedMedian(pairs)!);
      const interval = roundsInterval(perRound)!;
      if (interval.low <= design.delta && design.delta <= interval.high) covered += 1;
    }
    console.log(`[overhead rounds] t interval over 6 rounds: coverage ${((covered / TRIALS) * 100).toFixed(1)} %`);
    // 2000 trials: a true coverage of 95 % reads below 93.5 % with probability about 0.1 %.
    expect(covered / TRIALS).toBeGreaterThanOrEqual(0.935);
  });

  it('catches the interval that takes each request as independent: it ignores the round offsets and covers far less', () => {
    const random = seededRandom(42);
    let covered = 0;
    for (let trial = 0; trial < TRIALS; trial++) {
      const interval = pooledPairsInterval(simulatedRounds(random, design));
      if (interval.low <= design.delta && design.delta <= interval.high) covered += 1;
    }
    console.log(`[overhead rounds] pooled pairs as independent: coverage ${((covered / TRIALS) * 100).toFixed(1)} %`);
    expect(covered / TRIALS).toBeLessThan(0.6);
  });

  it('says how many rounds a half-width needs, and needs at least two rounds for an interval', () => {
    expect(roundsForHalfWidth(2.16, 0.5)).toBe(72);
    expect(roundsForHalfWidth(3.25, 0.5)).toBe(163);
    expect(roundsInterval([1])).toBeNull();
    expect(roundsInterval([1, 3])).toMatchObject({ rounds: 2, mean: 2 });
  });
});
