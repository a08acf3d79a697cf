import { ErrorCode, USAGE_ERROR_CODES, type ErrorShape } from '../../shared/errors';

/** An error the user can act on: a stable code, a message that says what to do, details. */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'AppError';
  }

  toShape(): ErrorShape {
    return this.details === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, details: this.details };
  }
}

/**
 * How cancelled work unwinds to whoever awaited it. It is not a failure: a task that ends this
 * way is reported `cancelled`, with no error (services/tasks.ts).
 */
export class Cancelled extends Error {
  constructor(message = 'cancelled') {
    super(message);
    this.name = 'Cancelled';
  }
}

/** Stops work between its steps once its signal is aborted. */
export function throwIfCancelled(signal: AbortSignal | undefined, message?: string): void {
  if (signal?.aborted) throw new Cancelled(message);
}

export function toErrorShape(error: unknown): ErrorShape {
  if (error instanceof AppError) return error.toShape();
  // A caller that still sees a cancellation as an error (an RPC reply) gets the request-failed code it always got.
  if (error instanceof Cancelled) return { code: ErrorCode.RequestFailed, message: error.message };
  const message = error instanceof Error ? error.message : String(error);
  return { code: ErrorCode.Internal, message };
}

/** CLI exit status (docs/ARCHITECTURE.md): 2 invalid input or usage, 1 runtime failure. */
export function exitStatusFor(error: unknown): 1 | 2 {
  return error instanceof AppError && USAGE_ERROR_CODES.includes(error.code) ? 2 : 1;
}
