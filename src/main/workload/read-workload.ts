import path from 'node:path';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { pathExists } from '../core/exists';
import { readFileCapped } from '../core/read-capped';
import { parseWorkloadOffThread } from './bounded-parse';
import type { WorkloadDef } from './workload-types';

/**
 * Reading a workload file, apart from the parser itself (parse-workload.ts): the thread that
 * reads the file never loads YAML or JSON Schema code, since the parse runs on the parser thread.
 */
export const MAX_WORKLOAD_FILE_BYTES = 64 * 1024 * 1024;

/**
 * Reads and parses a workload file. The parse runs on a parser thread under a deadline and a
 * heap limit (bounded-parse.ts), so a file that costs the parser minutes is refused instead.
 */
export async function readWorkloadFile(file: string): Promise<WorkloadDef> {
  if (file.toLowerCase().endsWith('.jsonl')) return traceWorkload(file);
  const bytes = await readFileCapped(file, 'workload file', MAX_WORKLOAD_FILE_BYTES);
  return parseWorkloadOffThread({ bytes }, file);
}

/**
 * A trace file (JSON Lines) given where a workload is expected: a workload of one group that
 * replays it. Its lines are read and checked when the workload is resolved.
 */
export async function traceWorkload(file: string): Promise<WorkloadDef> {
  if (!(await pathExists(file))) throw new AppError(ErrorCode.NotFound, `Trace file not found: ${file}`);
  const stem = path
    .basename(file)
    .replace(/\.jsonl$/i, '')
    .replace(/[^\w.-]/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '');
  return {
    name: `trace-${stem || 'file'}`.slice(0, 64),
    description: `Replay of the trace ${path.basename(file)} at its own timing`,
    groups: [{ name: 'trace', generate: { trace: { file: path.basename(file) } } }],
  };
}
