import type { ThinkTime } from '../workload/workload-types';

/** One pause between a conversation's turns, in ms, drawn from the session's distribution. */
export function drawThinkTime(think: ThinkTime, random: () => number): number {
  if ('fixed_ms' in think) return think.fixed_ms;
  if ('uniform_ms' in think) return think.uniform_ms[0] + random() * (think.uniform_ms[1] - think.uniform_ms[0]);
  // 1 − u lies in (0, 1], so the logarithm is finite.
  return -Math.log(1 - random()) * think.exponential_ms;
}

/** Waits `ms` (nothing when ≤ 0), ending early when `signal` aborts. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
