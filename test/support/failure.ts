import { expect } from 'vitest';
import { AppError } from '../../src/main/core/errors';

/** The AppError `work` rejects with; the test fails if it resolves or rejects with anything else. */
export async function appErrorOf(work: Promise<unknown>): Promise<AppError> {
  const error = await work.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}
