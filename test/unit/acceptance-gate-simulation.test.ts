import { describe, expect, it } from 'vitest';
import { acceptanceUpperBound } from '../../src/main/experiments/recommend';
import { seededRandom } from '../../src/main/core/random';

/**
 * Error rates of the acceptance gate ("not significantly below the baseline", one-sided,
 * α 0.05), measured on seeded binomial samples: how often it rejects a candidate that is
 * as good as the baseline, and how often it catches one that is clearly worse.
 */
const TRIALS = 4000;

type Counts = { accepted: number; judged: number };
/** Whether a gate calls the candidate significantly worse than the baseline. */
type Gate = (candidate: Counts, baseline: Counts) => boolean;

const productGate: Gate = (candidate, baseline) => acceptanceUpperBound(candidate, baseline, 0.05).upper < 0;

function rejectionRate(pBaseline: number, pCandidate: number, n: number, seed: number, gate: Gate = productGate): number {
  const random = seededRandom(seed);
  const draw = (p: number) => {
    let accepted = 0;
    for (let i = 0; i < n; i++) if (random() < p) accepted += 1;
    return { accepted, judged: n };
  };
  let rejected = 0;
  for (let trial = 0; trial < TRIALS; trial++) {
    if (gate(draw(pCandidate), draw(pBaseline))) rejected += 1;
  }
  return rejected / TRIALS;
}

const EQUAL_CANDIDATES = [
  { p: 0.5, n: 32 },
  { p: 0.9, n: 32 },
  { p: 0.1, n: 32 },
  { p: 0.5, n: 192 },
  { p: 0.97, n: 192 },
];

describe('acceptance gate: error rates', () => {
  it.each(EQUAL_CANDIDATES)('rejects an equally good candidate (p = $p, n = $n per side) at most 6 % of the time', ({ p, n }) => {
    const rate = rejectionRate(p, p, n, Math.round(p * 1000) + n);
    console.log(`acceptance gate, equal p ${p}, n ${n}: false rejection ${(rate * 100).toFixed(2)} %`);
    expect(rate).toBeLessThanOrEqual(0.06);
  });

  it('catches a candidate that accepts 20 points less (0.8 → 0.6, n = 192 per side) at least 80 % of the time', () => {
    const rate = rejectionRate(0.8, 0.6, 192, 99);
    console.log(`acceptance gate, 0.8 vs 0.6, n 192: power ${(rate * 100).toFixed(1)} %`);
    expect(rate).toBeGreaterThanOrEqual(0.8);
  });

  it('never rejects a candidate that accepts more often than the baseline', () => {
    expect(rejectionRate(0.5, 0.7, 64, 7)).toBe(0);
  });

  it('measures a gate that takes the baseline as exact above the 6 % bound: the simulation can tell a wrong gate', () => {
    // The usual mistake: the candidate's one-sided Wilson bound against the baseline's observed
    // rate, as though that were the true one. Both sides vary, so this rejects about twice as often as α.
    const z = 1.6448536269514722; // the standard normal's 95th percentile
    const baselineTakenAsExact: Gate = (candidate, baseline) => {
      const n = candidate.judged;
      const p = candidate.accepted / n;
      const upper = (p + (z * z) / (2 * n) + z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / (1 + (z * z) / n);
      return upper < baseline.accepted / baseline.judged;
    };
    const rates = EQUAL_CANDIDATES.map(({ p, n }) => rejectionRate(p, p, n, Math.round(p * 1000) + n, baselineTakenAsExact));
    console.log(
      `acceptance gate taking the baseline as exact, false rejection: ${rates.map((rate) => `${(rate * 100).toFixed(2)} %`).join(', ')}`,
    );
    for (const [index, rate] of rates.entries()) expect(rate, JSON.stringify(EQUAL_CANDIDATES[index])).toBeGreaterThan(0.06);
  });
});
