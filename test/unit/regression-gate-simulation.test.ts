import { describe, expect, it } from 'vitest';
import { percentile, sortedFinite } from '../../src/main/metrics/distribution';
import { regressionDecision } from '../../src/main/metrics/regression-gate';
import { gaussian, seededRandom } from '../../src/main/core/random';

/**
 * Simulated checks: each window (one run) gets its own multiplicative drift (log-normal, sd
 * `driftSd`) and each of its requests log-normal noise (sd `requestSd`); the window's value is
 * the median of its requests, as the gate takes it. `ratio` is the candidate's true slowdown.
 */
function regressionRate(design: {
  baselineWindows: number;
  candidateWindows: number;
  ratio: number;
  margin: number;
  trials: number;
  seed: number;
  driftSd?: number;
  requestSd?: number;
  requests?: number;
  /** How much slower the machine got since the stored baseline (1: no drift); it weighs on the candidate's windows. */
  drift?: number;
  /** The baseline measured again beside the candidate (`--interleave`): the drift weighs on its windows too. */
  interleaved?: boolean;
}): number {
  const normal = gaussian(seededRandom(design.seed));
  const window = (center: number) => {
    const drift = Math.exp((design.driftSd ?? 0.04) * normal());
    const values = Array.from({ length: design.requests ?? 30 }, () => center * drift * Math.exp((design.requestSd ?? 0.3) * normal()));
    return percentile(sortedFinite(Float64Array.from(values)), 0.5)!;
  };
  let regressions = 0;
  for (let trial = 0; trial < design.trials; trial++) {
    const decision = regressionDecision({
      baseline: Array.from({ length: design.baselineWindows }, () => window(20 * (design.interleaved ? (design.drift ?? 1) : 1))),
      candidate: Array.from({ length: design.candidateWindows }, () => window(20 * design.ratio * (design.drift ?? 1))),
      margin: design.margin,
      alpha: 0.05,
    });
    if (decision.verdict === 'regression') regressions += 1;
  }
  return regressions / design.trials;
}

// 2000 trials: a true rate of 5 % reads above 6.5 % with probability about 0.1 %.
const TRIALS = 2000;

describe('regression gate, simulated', () => {
  it('rarely fails a build that is no slower: false regressions at most alpha, one baseline run or several', () => {
    for (const [baselineWindows, seed] of [
      [1, 1],
      [3, 2],
    ] as const) {
      const rate = regressionRate({ baselineWindows, candidateWindows: 3, ratio: 1, margin: 0.05, trials: TRIALS, seed });
      console.log(
        `[regression gate] no change, ${baselineWindows} baseline + 3 candidate windows: false regressions ${(rate * 100).toFixed(2)} %`,
      );
      expect(rate).toBeLessThanOrEqual(0.065);
    }
  });

  it('holds alpha at the edge of the margin, where a slowdown is still accepted', () => {
    const rate = regressionRate({ baselineWindows: 1, candidateWindows: 3, ratio: 1.05, margin: 0.05, trials: TRIALS, seed: 3 });
    console.log(`[regression gate] exactly 5 % slower, margin 5 %: regressions ${(rate * 100).toFixed(2)} %`);
    expect(rate).toBeLessThanOrEqual(0.065);
  });

  it('catches half the speed almost always, and a 30 % slowdown most of the time with more windows', () => {
    const half = regressionRate({ baselineWindows: 1, candidateWindows: 3, ratio: 2, margin: 0.05, trials: TRIALS, seed: 4 });
    const moderate = regressionRate({ baselineWindows: 3, candidateWindows: 5, ratio: 1.3, margin: 0.05, trials: TRIALS, seed: 5 });
    console.log(
      `[regression gate] power: 2× slower (1 + 3 windows) ${(half * 100).toFixed(1)} %; 1.3× slower (3 + 5 windows) ${(moderate * 100).toFixed(1)} %`,
    );
    expect(half).toBeGreaterThanOrEqual(0.95);
    expect(moderate).toBeGreaterThanOrEqual(0.8);
  });

  it('drift since the stored baseline fails an unchanged build, unless the baseline is measured again beside it', () => {
    const stored = regressionRate({ baselineWindows: 1, candidateWindows: 3, ratio: 1, drift: 1.2, margin: 0.05, trials: TRIALS, seed: 6 });
    const fresh = regressionRate({
      baselineWindows: 3,
      candidateWindows: 3,
      ratio: 1,
      drift: 1.2,
      interleaved: true,
      margin: 0.05,
      trials: TRIALS,
      seed: 7,
    });
    const caught = regressionRate({
      baselineWindows: 3,
      candidateWindows: 3,
      ratio: 1.3,
      drift: 1.2,
      interleaved: true,
      margin: 0.05,
      trials: TRIALS,
      seed: 8,
    });
    console.log(
      `[regression gate] machine 20 % slower since the baseline, candidate unchanged: false regressions ${(stored * 100).toFixed(1)} % against the stored run, ${(fresh * 100).toFixed(2)} % interleaved (3 + 3); a 1.3× slowdown interleaved: caught ${(caught * 100).toFixed(1)} %`,
    );
    // The stored comparison cannot tell drift from a regression (several times alpha): that is what --interleave is for.
    expect(stored).toBeGreaterThan(0.2);
    expect(fresh).toBeLessThanOrEqual(0.065);
    expect(caught).toBeGreaterThanOrEqual(0.8);
  });

  it('turns the test around for throughput, where lower is worse, and gives no verdict without a spread', () => {
    const base = { margin: 0.05, alpha: 0.05, higherIsBetter: true };
    expect(regressionDecision({ ...base, baseline: [100, 102, 98], candidate: [50, 51, 49] }).verdict).toBe('regression');
    expect(regressionDecision({ ...base, baseline: [100, 102, 98], candidate: [200, 204, 198] }).verdict).toBe('pass');
    const single = regressionDecision({ ...base, baseline: [100], candidate: [50] });
    expect(single).toMatchObject({ verdict: 'insufficient data', note: expect.stringMatching(/rerun the candidate in 2 or more/) });
    // Hand-computed: logs of the candidate's windows spread by ±0.01 around log 2 against one baseline window at log 1.
    const decision = regressionDecision({
      baseline: [1],
      candidate: [2 * Math.exp(-0.01), 2, 2 * Math.exp(0.01)],
      margin: 0.05,
      alpha: 0.05,
    });
    const sd = Math.sqrt((0.01 ** 2 * 2) / 2);
    expect(decision.ratio).toBeCloseTo(2, 10);
    expect(decision.worse_by_at_least).toBeCloseTo(Math.exp(Math.log(2) - 2.919986 * sd * Math.sqrt(1 + 1 / 3)) - 1, 5);
  });
});
