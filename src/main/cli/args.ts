import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { didYouMean } from '../core/closest-name';

export type CommandHandler = (args: string[], signal: AbortSignal) => Promise<number>;

/** Node's word for an unknown flag, with the flag meant where one is a typo away (its tip on positionals then left out). */
function withNearestFlag(error: Error & { code?: string }, flags: readonly string[]): string {
  const unknown = error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? /^Unknown option '--([^'=]+)/.exec(error.message) : null;
  const hint = unknown ? didYouMean(unknown[1]!, flags, (flag) => `--${flag}`) : '';
  return hint ? `Unknown option '--${unknown![1]}'${hint}` : error.message;
}

/** Strict option parsing: an unknown option or a missing value is a usage error (exit 2). */
export function parseOptions<T extends NonNullable<ParseArgsConfig['options']>>(
  args: string[],
  options: T,
  usage: string,
  allowPositionals = false,
) {
  // "--concurrency -2" means the value -2 (to be refused with its own message), not a flag.
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const name = args[i]!.startsWith('--') ? args[i]!.slice(2) : null;
    const next = args[i + 1];
    if (name && options[name]?.type === 'string' && next !== undefined && /^-\d/.test(next)) {
      joined.push(`--${name}=${next}`);
      i += 1;
    } else {
      joined.push(args[i]!);
    }
  }
  try {
    return parseArgs({ args: joined, options, strict: true, allowPositionals });
  } catch (error) {
    throw new AppError(ErrorCode.Usage, `${withNearestFlag(error as Error & { code?: string }, Object.keys(options))}\n\nUsage: ${usage}`);
  }
}

export function positiveInteger(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new AppError(ErrorCode.Usage, `--${name} must be a positive integer, got "${raw}"`);
  return value;
}

/** A percentile flag: "90", "p99" or "99.9"; the range is the experiment check's to judge. */
export function percentileOption(raw: string | undefined, fallback: number, usage: string): number {
  if (raw === undefined) return fallback;
  const value = Number(raw.replace(/^p/i, ''));
  if (raw.trim() === '' || !Number.isFinite(value))
    throw new AppError(ErrorCode.Usage, `--percentile must be a number like 90 or 99, got "${raw}"\n\nUsage: ${usage}`);
  return value;
}

/** --quants as a list of labels, or 'all'; an empty list when the flag is absent. */
export function quantsFlag(raw: string | undefined, usage: string): string[] | 'all' {
  if (raw === undefined) return [];
  if (raw.trim().toLowerCase() === 'all') return 'all';
  const quants = raw
    .split(',')
    .map((quant) => quant.trim())
    .filter(Boolean);
  if (quants.length === 0 || quants.some((quant) => !/^[\w.-]{1,64}$/.test(quant)))
    throw new AppError(ErrorCode.Usage, `--quants expects labels like Q4_K_M,Q8_0 or "all", got "${raw}"\n\nUsage: ${usage}`);
  return quants;
}
