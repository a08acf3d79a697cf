import { describe, expect, it } from 'vitest';
import { turnSummaries } from '../../src/main/metrics/run-summary';
import { seededRandom } from '../../src/main/core/random';
import { drawThinkTime, pauseUntil } from '../../src/main/runner/think-time';
import type { MeasuredRequest } from '../../src/shared/contract/measurement';
import { measuredRequest } from '../support/measured-request';

describe('think time between turns', () => {
  it('draws from the stated distribution: fixed, uniform within its ends, exponential with its mean', () => {
    const random = seededRandom(3);
    expect(drawThinkTime({ fixed_ms: 250 }, random)).toBe(250);
    const uniform = Array.from({ length: 10_000 }, () => drawThinkTime({ uniform_ms: [100, 300] }, random));
    expect(Math.min(...uniform)).toBeGreaterThanOrEqual(100);
    expect(Math.max(...uniform)).toBeLessThanOrEqual(300);
    expect(uniform.reduce((sum, value) => sum + value, 0) / uniform.length).toBeCloseTo(200, -1);
    const exponential = Array.from({ length: 20_000 }, () => drawThinkTime({ exponential_ms: 500 }, random));
    const mean = exponential.reduce((sum, value) => sum + value, 0) / exponential.length;
    // The standard error of the mean is 500 / √20000 ≈ 3.5 ms: 20 ms is over five of them.
    expect(Math.abs(mean - 500)).toBeLessThan(20);
    expect(Math.min(...exponential)).toBeGreaterThanOrEqual(0);
    // An exponential's median is ln 2 × its mean.
    const sorted = [...exponential].sort((a, b) => a - b);
    expect(sorted[sorted.length / 2]! / 500).toBeCloseTo(Math.LN2, 1);
  });

  it('a pause ends early when the run is halted', async () => {
    const halt = new AbortController();
    const started = performance.now();
    const waiting = pauseUntil(started + 10_000, halt.signal);
    setTimeout(() => halt.abort(), 20);
    await waiting;
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('a pause never ends before its deadline on the high-resolution clock, however the timers round', async () => {
    const never = new AbortController().signal;
    const early: number[] = [];
    for (let attempt = 0; attempt < 200; attempt++) {
      // Fractional deadlines are where a millisecond timer wakes early.
      const deadline = performance.now() + 1 + (attempt % 7) * 0.37;
      await pauseUntil(deadline, never);
      const woke = performance.now();
      if (woke < deadline) early.push(deadline - woke);
    }
    expect(early).toEqual([]);
  });
});

describe('per-turn summary', () => {
  const row = (turn: number | null, fields: Partial<MeasuredRequest> = {}): MeasuredRequest =>
    measuredRequest(0, {
      ttft_ms: 10 * (turn ?? 1),
      prompt_tokens: 50 * (turn ?? 1),
      cached_tokens: 50 * ((turn ?? 1) - 1),
      turn,
      ...fields,
    });

  it('groups by turn, in order, with TTFT, prompt and cached tokens over successful requests', () => {
    const turns = turnSummaries([
      row(2),
      row(1),
      row(2, { error_class: 'http_500', ttft_ms: null, prompt_tokens: null, cached_tokens: null }),
      row(3),
      row(1),
      row(2, { cached_tokens: null }),
    ])!;
    expect(turns.map((turn) => [turn.turn, turn.requests, turn.failed])).toEqual([
      [1, 2, 0],
      [2, 3, 1],
      [3, 1, 0],
    ]);
    expect(turns[1]!.ttft_ms.n).toBe(2);
    expect(turns[1]!.prompt_tokens_mean).toBe(100);
    expect(turns[1]!.cached_tokens_mean).toBe(50);
    // The share counts only requests that reported both counts: 50 of 100.
    expect(turns[1]!.cached_share).toBeCloseTo(0.5, 12);
    expect(turns[0]!.cached_share).toBe(0);
    expect(turns[2]!.cached_share).toBeCloseTo(2 / 3, 12);
  });

  it('is null for a run of single requests', () => {
    expect(turnSummaries([row(null), row(null)])).toBeNull();
  });
});

describe('slots for concurrent users', () => {
  it('gives each user a slot with the context per slot unchanged, and leaves a model-sized context alone', async () => {
    const { profileWithSlots } = await import('../../src/main/runner/conversation-slots');
    const base = { parallelSlots: 1, contextSize: 4096 } as Parameters<typeof profileWithSlots>[0];
    expect(profileWithSlots(base, 8)).toMatchObject({ parallelSlots: 8, contextSize: 32_768 });
    expect(profileWithSlots({ ...base, parallelSlots: 2 }, 3)).toMatchObject({ parallelSlots: 3, contextSize: 6144 });
    expect(profileWithSlots({ ...base, contextSize: 0 }, 4)).toMatchObject({ parallelSlots: 4, contextSize: 0 });
  });
});
