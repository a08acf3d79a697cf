import path from 'node:path';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { readTextFileCapped } from '../core/read-capped';
import { seededRandom } from '../core/random';

/**
 * One request of a Mooncake-style trace: when it arrived (ms), its prompt and answer lengths
 * in tokens, and one id per block of prompt tokens; equal ids mean identical blocks (and, as
 * ids are given per prefix, identical prompts up to the end of that block).
 */
export interface TraceRecord {
  timestamp: number;
  input_length: number;
  output_length: number;
  hash_ids: number[];
}

export const DEFAULT_BLOCK_TOKENS = 512;
/** More requests than this in one replay is a mistake or a different tool's job. */
export const MAX_TRACE_REQUESTS = 100_000;
const MAX_INPUT_LENGTH = 1_000_000;

function problem(file: string, line: number, message: string): never {
  throw new AppError(ErrorCode.InvalidInput, `${file}:${line}: ${message}`);
}

const wholeNumber = (value: unknown, min: number) => typeof value === 'number' && Number.isInteger(value) && value >= min;

/** Reads a trace (JSON Lines), checking every line and naming the first that is wrong. */
export async function readTrace(file: string, blockTokens = DEFAULT_BLOCK_TOKENS): Promise<TraceRecord[]> {
  return parseTrace(file, await readTextFileCapped(file, 'trace file'), blockTokens);
}

function parseTrace(file: string, text: string, blockTokens: number): TraceRecord[] {
  const records: TraceRecord[] = [];
  const lines = text.split('\n');
  for (const [index, raw] of lines.entries()) {
    const line = index + 1;
    if (raw.trim() === '') continue;
    let value: Record<string, unknown>;
    try {
      value = JSON.parse(raw) as Record<string, unknown>;
    } catch (error) {
      problem(file, line, `not JSON: ${(error as Error).message}`);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      problem(file, line, 'expected an object with timestamp, input_length, output_length and hash_ids');
    const { timestamp, input_length: input, output_length: output, hash_ids: ids } = value;
    if (typeof timestamp !== 'number' || !Number.isFinite(timestamp) || timestamp < 0)
      problem(file, line, `timestamp must be a number of ms ≥ 0, got ${JSON.stringify(timestamp)}`);
    if (!wholeNumber(input, 1) || (input as number) > MAX_INPUT_LENGTH)
      problem(file, line, `input_length must be a whole number from 1 to ${MAX_INPUT_LENGTH}, got ${JSON.stringify(input)}`);
    if (!wholeNumber(output, 1)) problem(file, line, `output_length must be a whole number ≥ 1, got ${JSON.stringify(output)}`);
    if (!Array.isArray(ids) || !ids.every((id) => wholeNumber(id, 0))) problem(file, line, 'hash_ids must be a list of whole numbers ≥ 0');
    const blocks = Math.ceil((input as number) / blockTokens);
    if (ids.length !== blocks)
      problem(
        file,
        line,
        `input_length ${input as number} needs ${blocks} block(s) of ${blockTokens} tokens, but hash_ids has ${ids.length}; set block_tokens to the trace's block size`,
      );
    if (records.length > 0 && timestamp < records[records.length - 1]!.timestamp)
      problem(file, line, `timestamps must not go back in time (${timestamp} after ${records[records.length - 1]!.timestamp})`);
    records.push({ timestamp, input_length: input as number, output_length: output as number, hash_ids: ids as number[] });
    if (records.length > MAX_TRACE_REQUESTS) problem(file, line, `more than ${MAX_TRACE_REQUESTS} requests; replay a --trace-window of it`);
  }
  if (records.length === 0) throw new AppError(ErrorCode.InvalidInput, `${file}: the trace has no requests`);
  return records;
}

/**
 * The records inside [startS, endS) seconds of the trace (from its first timestamp), with
 * their arrival offsets from the window's first request, divided by `speed` (2 replays twice
 * as fast).
 */
export function traceWindow(
  records: readonly TraceRecord[],
  options: { speed?: number; startS?: number | null; endS?: number | null },
): { record: TraceRecord; arrivalMs: number }[] {
  const speed = options.speed ?? 1;
  const origin = records[0]!.timestamp;
  const inside = records.filter((record) => {
    const at = (record.timestamp - origin) / 1000;
    return at >= (options.startS ?? 0) && (options.endS == null || at < options.endS);
  });
  if (inside.length === 0) return [];
  const first = inside[0]!.timestamp;
  return inside.map((record) => ({ record, arrivalMs: (record.timestamp - first) / speed }));
}

/** Token ids a replayed prompt may use: ordinary tokens, clear of the special ones most vocabularies keep at either end. */
export interface TokenRange {
  low: number;
  high: number;
}

/** The range for a vocabulary of `size` tokens (a 32,000-token vocabulary when the server does not say). */
export function tokenRangeFor(size: number | null): TokenRange {
  const vocabulary = size ?? 32_000;
  const low = Math.min(1000, Math.floor(vocabulary / 10));
  return { low, high: Math.max(low + 1, Math.min(vocabulary - 256, low + 29_000)) };
}

/** The tokens of one block: the same id always gives the same tokens, different ids (almost surely) different ones. */
export function blockTokenIds(hashId: number, count: number, range: TokenRange): number[] {
  // Multiplying by an odd constant mod 2^32 keeps distinct 32-bit ids apart.
  const random = seededRandom((Math.imul(hashId >>> 0, 0x9e3779b1) + 97) >>> 0);
  return Array.from({ length: count }, () => range.low + Math.floor(random() * (range.high - range.low)));
}

/** A prompt of exactly `input_length` token ids made of the record's blocks (the last one cut to what remains). */
export function promptTokenIds(record: Pick<TraceRecord, 'hash_ids' | 'input_length'>, blockTokens: number, range: TokenRange): number[] {
  const ids: number[] = [];
  for (const [index, hashId] of record.hash_ids.entries()) {
    const count = Math.min(blockTokens, record.input_length - index * blockTokens);
    ids.push(...blockTokenIds(hashId, count, range));
  }
  return ids;
}

/** A trace generator's file, relative to the workload that names it. */
export function traceFile(workloadFile: string, file: string): string {
  return path.resolve(path.dirname(workloadFile), file);
}
