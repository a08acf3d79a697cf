/**
 * Error codes that cross process and transport boundaries. The renderer, the CLI and
 * exports all key off these strings, so they are part of the contract: add, never rename.
 */
export const ErrorCode = {
  Usage: 'usage',
  InvalidInput: 'invalid_input',
  NotFound: 'not_found',
  /** The request names something this interface may not reach (a path outside the roots, a flag that is not allowed). */
  Forbidden: 'forbidden',
  EngineMissing: 'engine_missing',
  EngineBuildFailed: 'engine_build_failed',
  ServerStartFailed: 'server_start_failed',
  ServerExited: 'server_exited',
  RequestFailed: 'request_failed',
  DemoModelInvalid: 'demo_model_invalid',
  StorageFailed: 'storage_failed',
  Internal: 'internal',
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** The one shape in which an error travels over IPC, WebSocket and `--json` output. */
export interface ErrorShape {
  code: ErrorCode;
  message: string;
  details?: unknown;
}

/** Codes that mean "the caller asked for something invalid" (CLI exit status 2). */
export const USAGE_ERROR_CODES: readonly ErrorCode[] = [ErrorCode.Usage, ErrorCode.InvalidInput, ErrorCode.NotFound, ErrorCode.Forbidden];
