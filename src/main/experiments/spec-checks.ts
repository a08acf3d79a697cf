import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';

/** Refuses an experiment spec with what is wrong in it (every face reports it as invalid input). */
export function invalidSpec(message: string): never {
  throw new AppError(ErrorCode.InvalidInput, message);
}

/** A whole number from 1 to `max`, or the fallback when the spec leaves it out. */
export function wholeNumber(name: string, value: number | null | undefined, fallback: number, max = 1_000_000): number {
  if (value === null || value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1 || value > max)
    invalidSpec(`${name} must be a whole number from 1 to ${max}, got ${JSON.stringify(value)}`);
  return value;
}
