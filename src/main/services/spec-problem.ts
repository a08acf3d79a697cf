import { USAGE_ERROR_CODES } from '../../shared/errors';
import { AppError } from '../core/errors';

/** A spec's first problem as a form shows it while it is filled in, or none; a failure that is not the caller's is thrown. */
export async function firstProblem(check: () => Promise<unknown>): Promise<{ problem: string | null }> {
  try {
    await check();
    return { problem: null };
  } catch (error) {
    if (error instanceof AppError && USAGE_ERROR_CODES.includes(error.code)) return { problem: error.message };
    throw error;
  }
}
