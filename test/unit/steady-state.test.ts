import { describe, expect, it } from 'vitest';
import { steadyStateCheck, STEADY_STATE_RULE } from '../../src/main/metrics/steady-state';
import { seededRandom } from '../../src/main/core/random';
import type { MeasuredRequest } from '../../src/shared/contract/measurement';
import { measuredRequest, summarizeCompleted } from '../support/measured-request';

/** Completion times of a Poisson process whose rate goes linearly from `from` to `to` (per s) over `seconds`. */
function completions(random: () => number, from: number, to: number, seconds: number): number[] {
  const peak = Math.max(from, to);
  const times: number[] = [];
  // Thinning: candidates at the peak rate, each kept with probability rate(t) / peak.
  for (let t = -Math.log(1 - random()) / peak; t < seconds; t += -Math.log(1 - random()) / peak) {
    const rate = from + ((to - from) * t) / seconds;
    if (random() < rate / peak) times.push(t * 1000);
  }
  return times;
}

describe('steady-state check of the measured window', () => {
  it('pins the test on a hand-made window: 30 and 60 completions in the halves is a trend, 45 and 45 is not', () => {
    const spread = (count: number, start: number) => Array.from({ length: count }, (_, i) => start + (i + 0.5) * (5000 / count));
    const rising = steadyStateCheck([...spread(30, 0), ...spread(60, 5000)], 0, 10_000);
    expect(rising).toMatchObject({ first_half: 30, second_half: 60, trending: true });
    expect(rising.change).toBeCloseTo(1, 12);
    // P(X ≥ 60 | 90, ½) doubled.
    expect(rising.p_value!).toBeLessThan(0.003);
    const flat = steadyStateCheck([...spread(45, 0), ...spread(45, 5000)], 0, 10_000);
    expect(flat).toMatchObject({ trending: false, p_value: 1, change: 0 });
    const few = steadyStateCheck(spread(10, 0), 0, 10_000);
    expect(few).toMatchObject({ trending: false, p_value: null });
    expect(few.rule).toMatch(/not judged below 20 completions/);
  });

  it.each([
    [2, 10],
    [10, 30],
    [50, 20],
  ])('flags a steady Poisson throughput (%d req/s for %d s) at most α of the time', (rate, seconds) => {
    const random = seededRandom(rate * 1000 + seconds);
    const trials = 2000;
    let flagged = 0;
    for (let trial = 0; trial < trials; trial++)
      if (steadyStateCheck(completions(random, rate, rate, seconds), 0, seconds * 1000).trending) flagged += 1;
    console.log(`[steady state] ${rate} req/s for ${seconds} s: flagged ${(flagged / trials).toFixed(4)} of steady windows`);
    expect(flagged / trials).toBeLessThanOrEqual(STEADY_STATE_RULE.alpha + 0.005);
  });

  it('has the power a two-halves test of 300 completions allows: a rise by half sometimes, fourfold nearly always', () => {
    const random = seededRandom(77);
    const trials = 1000;
    let flagged = 0;
    // 8 → 12 req/s over 30 s: about 300 completions, halves near 135 and 165.
    for (let trial = 0; trial < trials; trial++) if (steadyStateCheck(completions(random, 8, 12, 30), 0, 30_000).trending) flagged += 1;
    console.log(`[steady state] 8 → 12 req/s over 30 s: flagged ${(flagged / trials).toFixed(3)}`);
    // Halves near 135 and 165 differ by 1.7 null standard deviations; the test needs 2.6: about one in five.
    expect(flagged / trials).toBeGreaterThan(0.1);
    // 4 → 16 req/s: halves near 105 and 195, 5.2 null standard deviations apart.
    let fourfold = 0;
    for (let trial = 0; trial < trials; trial++) if (steadyStateCheck(completions(random, 4, 16, 30), 0, 30_000).trending) fourfold += 1;
    console.log(`[steady state] 4 → 16 req/s over 30 s: flagged ${(fourfold / trials).toFixed(3)}`);
    expect(fourfold / trials).toBeGreaterThan(0.95);
  });
});

describe('steady state in the run summary', () => {
  const request = (t0: number, e2e: number): MeasuredRequest =>
    measuredRequest(0, { scheduled_ms: t0, t0_ms: t0, end_ms: t0 + e2e, e2e_ms: e2e });
  const summary = (rows: MeasuredRequest[], mode: 'open' | 'closed') =>
    summarizeCompleted(rows, { load: mode === 'open' ? { mode, rate: 10, burstiness: 1, max_outstanding: 64 } : { mode, concurrency: 4 } });

  it('open loop: judges completions from the first completion to the last send, so neither the start nor the drain is a trend', () => {
    // 400 sends every 25 ms, each taking 2 s: no completion in the first 2 s, only the drain in the last 2 s.
    const steady = summary(
      Array.from({ length: 400 }, (_, i) => request(i * 25, 2000)),
      'open',
    );
    expect(steady.load.steady_state).toMatchObject({ trending: false });
    // Sends speeding up: 40 in the first 6 s, 80 in the next 6 s.
    const speeding = summary(
      [...Array.from({ length: 40 }, (_, i) => request(i * 150, 50)), ...Array.from({ length: 80 }, (_, i) => request(6000 + i * 75, 50))],
      'open',
    );
    expect(speeding.load.steady_state).toMatchObject({ trending: true });
    expect(speeding.load.steady_state!.change!).toBeGreaterThan(0.5);
  });
});
