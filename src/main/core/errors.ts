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

export function toErrorShape(error: unknown): ErrorShape {
  if (error instanceof AppError) return error.toShape();
  const message = error instanceof Error ? error.message : String(error);
  return { code: ErrorCode.Internal, message };
}

/** CLI exit status (docs/ARCHITECTURE.md): 2 invalid input or usage, 1 runtime failure. */
export function exitStatusFor(error: unknown): 1 | 2 {
  return error instanceof AppError && USAGE_ERROR_CODES.includes(error.code) ? 2 : 1;
}
