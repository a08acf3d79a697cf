import type { ShardLoad } from '../../shared/contract/runs';
import type { StreamedCompletion } from '../client/stream-client';

/**
 * The messages between a run and its stream shards (worker threads that send requests and read
 * their streams). Times cross as milliseconds on the process-wide monotonic clock
 * (`process.hrtime`). Node gives a worker thread the process's `performance.now()` origin, so
 * the shift between the two clocks measures ~0 today; the web's rule, which gives each worker
 * the moment it started, would not leave the run's times silently off by the worker's start.
 */
export interface ShardInit {
  shard: number;
  baseUrl: string;
  headers?: Record<string, string>;
  timeouts: { firstTokenMs: number; totalMs: number };
  sockets: number;
  /** The run thread's `performance.now()` origin on the shared clock: every time a shard sends back is on the run's clock. */
  runOrigin: number;
}

/** One request for a shard. `dueAt` on the shared clock: the shard sends it no earlier; null sends it at once. */
export interface ShardRequest {
  id: number;
  path: string;
  body: Record<string, unknown>;
  dueAt: number | null;
}

/** A request's end: its completion, or null when it was never sent (the shard was halted before its time). */
export interface ShardResult {
  id: number;
  completion: StreamedCompletion | null;
}

/*
 * Requests and results cross in batches, one message per turn of the sender's event loop: a message
 * costs a wake-up and a clone on each side, which was most of what sharding cost the run's thread.
 */
export type ToShard =
  | { kind: 'send'; requests: ShardRequest[] }
  /** The measured window opened: the shard's loop figures start here. */
  | { kind: 'window' }
  /** Send nothing more: requests still waiting for their time come back not sent. */
  | { kind: 'halt' }
  /** The user cancelled: in-flight requests are cancelled too. */
  | { kind: 'cancel' }
  | { kind: 'report' };

export type FromShard = { kind: 'ready' } | { kind: 'done'; results: ShardResult[] } | { kind: 'report'; load: ShardLoad };

export interface TurnBatcher<T> {
  add(item: T): void;
  /** Hands over what is held now, before a message that must come after it. */
  flush(): void;
}

/** Collects items and hands them over together at the end of this turn of the event loop (a check-phase callback). */
export function turnBatcher<T>(deliver: (items: T[]) => void): TurnBatcher<T> {
  let items: T[] = [];
  let scheduled: NodeJS.Immediate | null = null;
  const flush = () => {
    if (scheduled) clearImmediate(scheduled);
    scheduled = null;
    if (items.length === 0) return;
    const batch = items;
    items = [];
    deliver(batch);
  };
  return {
    add(item) {
      items.push(item);
      scheduled ??= setImmediate(flush);
    },
    flush,
  };
}

/**
 * This thread's `performance.now()` origin on the shared monotonic clock, in ms. Read as the
 * tightest of a few brackets, so the error is the time between two `performance.now()` calls.
 */
export function clockOrigin(): number {
  let origin = 0;
  let tightest = Number.POSITIVE_INFINITY;
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const before = performance.now();
    const shared = Number(process.hrtime.bigint()) / 1e6;
    const after = performance.now();
    if (after - before < tightest) {
      tightest = after - before;
      origin = shared - (before + after) / 2;
    }
  }
  return origin;
}

/** Moves every time in a completion by `shiftMs`, in place: from a shard's clock to the run's. */
export function shiftCompletionTimes(completion: StreamedCompletion, shiftMs: number): StreamedCompletion {
  const shiftAll = (times: number[]) => {
    for (let index = 0; index < times.length; index += 1) times[index]! += shiftMs;
  };
  completion.t0 += shiftMs;
  if (completion.headersAt !== null) completion.headersAt += shiftMs;
  if (completion.finishAt !== null) completion.finishAt += shiftMs;
  if (completion.endAt !== null) completion.endAt += shiftMs;
  // The lists may share no array, but a shift applied twice would be silent: shift each distinct array once.
  const lists = new Set([
    completion.contentChunkTimes,
    completion.answerChunkTimes,
    completion.reasoningChunkTimes,
    completion.toolCallChunkTimes,
  ]);
  lists.forEach(shiftAll);
  for (const call of completion.toolCalls) {
    call.firstAt += shiftMs;
    call.lastAt += shiftMs;
  }
  return completion;
}
