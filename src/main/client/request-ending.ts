import type http from 'node:http';
import type { RequestErrorClass } from '../../shared/contract/measurement';
import { onAbort } from './abort-fanout';
import type { StreamedCompletion } from './stream-client';

export interface RequestEnding {
  /** Ends the request with `error` (null: a success); every call after the first is ignored. */
  finish(error: StreamedCompletion['error']): void;
  /** Ends it with an error and closes its connection. */
  fail(errorClass: RequestErrorClass, message: string): void;
  /** Timers that end it early; cleared when it ends. */
  readonly timers: NodeJS.Timeout[];
  readonly settled: boolean;
}

/**
 * How one request ends, once, whatever ends it first (its answer, an error, a timeout, the run's
 * cancel): its timers cleared, its cancel listener dropped, its end stamped, then `settle`. Both
 * clients, the streamed and the single-answer one, end their requests through it.
 */
export function requestEnding(
  result: StreamedCompletion,
  request: http.ClientRequest,
  limits: { signal?: AbortSignal; totalTimeoutMs?: number },
  settle: () => void,
): RequestEnding {
  let settled = false;
  const timers: NodeJS.Timeout[] = [];
  const finish = (error: StreamedCompletion['error']) => {
    if (settled) return;
    settled = true;
    timers.forEach(clearTimeout);
    stopListening();
    result.endAt ??= performance.now();
    result.error = error;
    settle();
  };
  const fail = (errorClass: RequestErrorClass, message: string) => {
    finish({ class: errorClass, message });
    request.destroy();
  };
  // onAbort never calls back at once, so stopListening is set before finish can need it.
  const stopListening = limits.signal ? onAbort(limits.signal, () => fail('cancelled', 'cancelled')) : () => {};
  if (limits.totalTimeoutMs)
    timers.push(setTimeout(() => fail('total_timeout', `not finished within ${limits.totalTimeoutMs} ms`), limits.totalTimeoutMs));
  return {
    finish,
    fail,
    timers,
    get settled() {
      return settled;
    },
  };
}
