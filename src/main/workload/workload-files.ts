import fs from 'node:fs';
import path from 'node:path';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { didYouMean } from '../core/closest-name';
import { pathExists } from '../core/exists';
import { projectRoot } from '../core/paths';

/* Where workload files are: kept apart from the parser so that resolving a name loads no YAML or JSON Schema code. */

export function builtinWorkloadDir(): string {
  return path.join(projectRoot(), 'resources', 'workloads');
}

export function listBuiltinWorkloads(): string[] {
  return fs
    .readdirSync(builtinWorkloadDir())
    .filter((name) => name.endsWith('.yaml'))
    .map((name) => name.slice(0, -5))
    .sort();
}

/** A workload file, or the built-in workload of that name; asynchronous so that a stalled working folder holds no one's thread. */
export async function workloadPath(fileOrName: string): Promise<string> {
  if (/^[\w.-]+$/.test(fileOrName) && !fileOrName.endsWith('.yaml') && !fileOrName.endsWith('.json') && !(await pathExists(fileOrName))) {
    const builtin = path.join(builtinWorkloadDir(), `${fileOrName}.yaml`);
    if (!(await pathExists(builtin))) {
      const builtins = listBuiltinWorkloads();
      throw new AppError(
        ErrorCode.NotFound,
        `No workload file or built-in workload named "${fileOrName}"${didYouMean(fileOrName, builtins) || '.'} Built-in: ${builtins.join(', ')}`,
      );
    }
    return builtin;
  }
  return path.resolve(fileOrName);
}
