import { describe, expect, it } from 'vitest';
import { runProgressLine } from '../../src/main/cli/progress';

describe("a run's progress line", () => {
  const base = { failed: 0, warmup: false, lastTtftMs: 31.25, durationMs: null };

  it('counts against the total and estimates the time left from the pace so far', () => {
    expect(runProgressLine({ ...base, finished: 10, total: 40 }, 5000)).toBe('10/40 done, 0 failed, last TTFT 31.3 ms, about 15 s left');
    expect(runProgressLine({ ...base, finished: 10, total: 200, failed: 2 }, 30_000)).toBe(
      '10/200 done, 2 failed, last TTFT 31.3 ms, about 9 min 30 s left',
    );
    expect(runProgressLine({ ...base, finished: 0, total: 40, lastTtftMs: null }, 100)).toBe('0/40 done, 0 failed, last TTFT —');
  });

  it('counts down a duration-bound run by the clock, and says when warmup is running', () => {
    expect(runProgressLine({ ...base, finished: 7, total: null, durationMs: 60_000 }, 20_000)).toBe(
      '7 done, 0 failed, last TTFT 31.3 ms, about 40 s left',
    );
    expect(runProgressLine({ ...base, finished: 1, total: null, durationMs: 60_000, warmup: true, lastTtftMs: 4.5 }, 900)).toBe(
      'warmup: 1 done, 0 failed, last TTFT 4.50 ms',
    );
  });
});
