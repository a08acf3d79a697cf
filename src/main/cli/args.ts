import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';

export type CommandHandler = (args: string[], signal: AbortSignal) => Promise<number>;

/** Strict option parsing: an unknown option or a missing value is a usage error (exit 2). */
export function parseOptions<T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T, usage: string, allowPositionals = false) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals });
  } catch (error) {
    throw new AppError(ErrorCode.Usage, `${(error as Error).message}\n\nUsage: ${usage}`);
  }
}

export function positiveInteger(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new AppError(ErrorCode.Usage, `--${name} must be a positive integer, got "${raw}"`);
  return value;
}

/** Human progress goes to stderr, and only on a terminal. */
export function progressLine(line: string): void {
  if (process.stderr.isTTY) process.stderr.write(`${line}\n`);
}
