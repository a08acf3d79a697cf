import fs from 'node:fs';
import path from 'node:path';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
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

export function workloadPath(fileOrName: string): string {
  if (/^[\w.-]+$/.test(fileOrName) && !fileOrName.endsWith('.yaml') && !fileOrName.endsWith('.json') && !fs.existsSync(fileOrName)) {
    const builtin = path.join(builtinWorkloadDir(), `${fileOrName}.yaml`);
    if (!fs.existsSync(builtin))
      throw new AppError(
        ErrorCode.NotFound,
        `No workload file or built-in workload named "${fileOrName}". Built-in: ${listBuiltinWorkloads().join(', ')}`,
      );
    return builtin;
  }
  return path.resolve(fileOrName);
}
