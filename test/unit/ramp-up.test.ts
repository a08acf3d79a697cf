import { describe, expect, it } from 'vitest';
import { EXPONENTIAL_RAMP_START, generateLoad, rampClock, rampFraction, rampProgressAt } from '../../src/main/runner/load-generator';

describe('ramp-up before the measured window', () => {
  it('shapes: linear climbs from zero, exponential from 1/16 doubling evenly; joining points invert them', () => {
    expect(rampFraction('linear', 0.25)).toBe(0.25);
    expect(rampFraction('exponential', 0)).toBe(EXPONENTIAL_RAMP_START);
    expect(rampFraction('exponential', 0.5)).toBeCloseTo(0.25, 12);
    expect(rampFraction('exponential', 1)).toBe(1);
    for (const shape of ['linear', 'exponential'] as const)
      for (const fraction of [0.1, 0.25, 0.5, 1]) {
        const progress = rampProgressAt(shape, fraction);
        if (fraction >= rampFraction(shape, 0)) expect(rampFraction(shape, progress)).toBeCloseTo(fraction, 12);
        else expect(progress).toBe(0);
      }
  });

  it('open loop: arrivals during a linear ramp speed up, are flagged warmup, and the window opens at its end at the full rate', async () => {
    const sends: { scheduledAt: number; warmup: boolean }[] = [];
    let openedAt: number | null = null;
    const outcome = await generateLoad({
      load: { mode: 'open', rate: 100, burstiness: 1, maxOutstanding: 64, rampUp: { shape: 'linear', ms: 1000 } },
      stop: { requests: 100, durationMs: null },
      warmup: 0,
      halt: new AbortController().signal,
      seed: 5,
      onMeasuredStart: () => (openedAt = performance.now()),
      send: async (_index, warmup, scheduledAt) => {
        sends.push({ scheduledAt: scheduledAt!, warmup });
        await new Promise((resolve) => setTimeout(resolve, 2));
        return true;
      },
    });
    // The first arrival is due the moment the load starts: times from it are the seeded schedule
    // itself, the same on an idle machine and a busy one.
    const origin = sends[0]!.scheduledAt;
    const at = (send: { scheduledAt: number }) => send.scheduledAt - origin;
    const ramp = sends.filter((send) => send.warmup);
    const window = sends.filter((send) => !send.warmup);
    expect(window).toHaveLength(100);
    // A linear ramp to 100 req/s over 1 s averages 50 req/s: about 50 arrivals (Poisson, ± 4 sd ≈ 28).
    expect(ramp.length).toBeGreaterThan(22);
    expect(ramp.length).toBeLessThan(78);
    // Three quarters of a linear ramp's arrivals fall in its second half.
    const late = ramp.filter((send) => at(send) >= 500).length;
    expect(late / ramp.length).toBeGreaterThan(0.55);
    expect(ramp.every((send) => at(send) < 1000)).toBe(true);
    expect(window.every((send) => at(send) >= 1000)).toBe(true);
    // Lower bounds only: a busy machine can open the window late, never early.
    expect(openedAt! - origin).toBeGreaterThanOrEqual(1000);
    expect(outcome.measuredStart! - origin).toBeGreaterThanOrEqual(1000);
    // The window runs at the full rate: 100 arrivals of mean gap 10 ms are scheduled over about a second.
    const span = at(window.at(-1)!) - at(window[0]!);
    expect(span).toBeGreaterThan(600);
    expect(span).toBeLessThan(1400);
  });

  it('closed loop: users join one by one during the ramp, then the window runs at full concurrency', async () => {
    const concurrency = 4;
    const rampMs = 400;
    let active = 0;
    const rampSends: { elapsedAtMost: number; active: number }[] = [];
    let windowPeak = 0;
    const started = performance.now();
    await generateLoad({
      load: { mode: 'closed', concurrency, rampUp: { shape: 'linear', ms: rampMs } },
      stop: { requests: 40, durationMs: null },
      warmup: 0,
      halt: new AbortController().signal,
      send: async (_index, warmup) => {
        active += 1;
        // Measured from before the load began, so at least the time since it began.
        if (warmup) rampSends.push({ elapsedAtMost: performance.now() - started, active });
        else windowPeak = Math.max(windowPeak, active);
        await new Promise((resolve) => setTimeout(resolve, 10));
        active -= 1;
        return true;
      },
    });
    // User k joins at k / 4 of a linear ramp; however late the machine ran, no send saw more users than had joined by then.
    const joinedBy = (elapsed: number) => Math.min(concurrency, 1 + Math.floor(elapsed / (rampMs / concurrency)));
    expect(rampSends.length).toBeGreaterThan(0);
    expect(rampSends[0]!.active).toBe(1);
    for (const send of rampSends)
      expect(send.active, `${send.elapsedAtMost.toFixed(1)} ms`).toBeLessThanOrEqual(joinedBy(send.elapsedAtMost));
    expect(windowPeak).toBe(concurrency);
  });
});

describe('the ramp clock', () => {
  it('inverts the integral of the rate: the ramp holds the stated share of full-rate time and then runs one for one', () => {
    const linear = rampClock({ shape: 'linear', ms: 1000 });
    // A linear ramp holds half of full-rate time: 500 ms of it end exactly at the ramp's end.
    expect(linear(500)).toBeCloseTo(1000, 9);
    expect(linear(125)).toBeCloseTo(500, 9);
    expect(linear(600)).toBeCloseTo(1100, 9);
    const exponential = rampClock({ shape: 'exponential', ms: 1000 });
    const held = (1000 * (1 - 1 / 16)) / Math.log(16);
    expect(exponential(held)).toBeCloseTo(1000, 9);
    expect(exponential(held + 50)).toBeCloseTo(1050, 9);
    // At the start it runs at 1/16 of real time.
    expect(exponential(0.01) / 0.16).toBeCloseTo(1, 3);
  });
});
