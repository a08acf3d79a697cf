import { seededRandom } from '../models/random';
import { arrivalGaps } from './arrivals';

export type LoadSpec =
  | { mode: 'closed'; concurrency: number }
  /** `seed` picks the arrival schedule (1 unless given), so repeated looks at one rate can draw fresh arrivals. */
  | { mode: 'open'; rate: number; burstiness: number; maxOutstanding: number; seed?: number };

export interface StopRule {
  requests: number | null;
  durationMs: number | null;
}

/** Called for each request; resolves when the request has finished and been recorded. */
export type SendRequest = (index: number, warmup: boolean, scheduledAt: number | null) => Promise<void>;

export interface LoadOutcome {
  /** Monotonic ms: first measured send and last measured completion. */
  measuredStart: number | null;
  measuredEnd: number | null;
  sent: number;
  stoppedBy: 'requests' | 'duration' | 'halted';
}

/**
 * Drives requests: warmup first (flagged, excluded), then the measured window in closed
 * loop (a completion starts the next request) or open loop (scheduled arrivals, bounded
 * outstanding). `halt` stops scheduling new requests; in-flight ones are awaited.
 */
export async function generateLoad(options: {
  load: LoadSpec;
  stop: StopRule;
  warmup: number;
  send: SendRequest;
  halt: AbortSignal;
  seed?: number;
}): Promise<LoadOutcome> {
  const { load, stop, send, halt } = options;
  let index = 0;
  const warmupWorkers = load.mode === 'closed' ? load.concurrency : 1;
  let warmupLeft = options.warmup;
  await Promise.all(
    Array.from({ length: Math.min(warmupWorkers, Math.max(warmupLeft, 0)) }, async () => {
      while (warmupLeft > 0 && !halt.aborted) {
        warmupLeft -= 1;
        await send(index++, true, null);
      }
    }),
  );

  const outcome: LoadOutcome = { measuredStart: null, measuredEnd: null, sent: 0, stoppedBy: 'requests' };
  if (halt.aborted) return { ...outcome, stoppedBy: 'halted' };
  const start = performance.now();
  outcome.measuredStart = start;
  const deadline = stop.durationMs === null ? Number.POSITIVE_INFINITY : start + stop.durationMs;
  const more = () => {
    if (halt.aborted) return ((outcome.stoppedBy = 'halted'), false);
    if (stop.requests !== null && outcome.sent >= stop.requests) return ((outcome.stoppedBy = 'requests'), false);
    if (performance.now() >= deadline) return ((outcome.stoppedBy = 'duration'), false);
    return true;
  };
  const measured = async (scheduledAt: number | null) => {
    outcome.sent += 1;
    await send(index++, false, scheduledAt);
    outcome.measuredEnd = Math.max(outcome.measuredEnd ?? 0, performance.now());
  };

  if (load.mode === 'closed') {
    await Promise.all(
      Array.from({ length: load.concurrency }, async () => {
        while (more()) await measured(null);
      }),
    );
    return outcome;
  }

  const gap = arrivalGaps(load.rate, load.burstiness, seededRandom(options.seed ?? load.seed ?? 1));
  const inFlight = new Set<Promise<void>>();
  let due = start;
  while (more()) {
    const wait = due - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait - 0.5));
    while (performance.now() < due) await new Promise((resolve) => setImmediate(resolve));
    // At the outstanding bound the request waits for a slot; the lateness is recorded as slip.
    while (inFlight.size >= load.maxOutstanding) await Promise.race(inFlight);
    if (!more()) break;
    const request = measured(due).finally(() => inFlight.delete(request));
    inFlight.add(request);
    due += gap();
  }
  await Promise.all(inFlight);
  return outcome;
}
