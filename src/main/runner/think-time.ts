import type { ThinkTime } from '../workload/workload-types';
import { onAbort } from '../client/abort-fanout';

/** One pause between a conversation's turns, in ms, drawn from the session's distribution. */
export function drawThinkTime(think: ThinkTime, random: () => number): number {
  if ('fixed_ms' in think) return think.fixed_ms;
  if ('uniform_ms' in think) return think.uniform_ms[0] + random() * (think.uniform_ms[1] - think.uniform_ms[0]);
  // 1 − u lies in (0, 1], so the logarithm is finite.
  return -Math.log(1 - random()) * think.exponential_ms;
}

/**
 * Waits until `performance.now()` reaches `deadline` (at once when it has), ending early when
 * `signal` aborts. Node's timers count on a millisecond loop clock and may wake up to a
 * millisecond before the deadline on the high-resolution clock, so an early wake waits again:
 * a user's think time is never cut short.
 */
export function pauseUntil(deadline: number, signal: AbortSignal): Promise<void> {
  if (performance.now() >= deadline || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    let timer = setTimeout(wake, deadline - performance.now());
    function wake() {
      const left = deadline - performance.now();
      if (left > 0 && !signal.aborted) {
        timer = setTimeout(wake, Math.max(1, left));
        return;
      }
      finish();
    }
    function finish() {
      clearTimeout(timer);
      stopListening();
      resolve();
    }
    const stopListening = onAbort(signal, finish);
  });
}
