import fs from 'node:fs';
import path from 'node:path';
import type { WorkloadInfo, WorkloadsService } from '../../shared/contract';
import { AppError } from '../core/errors';
import { builtinWorkloadDir, listBuiltinWorkloads, parseWorkloadText, readWorkloadFile, workloadPath, type WorkloadProblem } from '../workload/parse-workload';

export function createWorkloadsService(): WorkloadsService {
  return {
    async list(): Promise<WorkloadInfo[]> {
      return listBuiltinWorkloads().map((name) => {
        const file = path.join(builtinWorkloadDir(), `${name}.yaml`);
        const def = readWorkloadFile(file);
        return { name, file, description: def.description ?? '', groups: def.groups.map((group) => group.name), builtin: true };
      });
    },
    async read(name) {
      const file = workloadPath(name);
      return { name, file, text: fs.readFileSync(file, 'utf8') };
    },
    async validate(text) {
      try {
        const def = parseWorkloadText(text, 'editor');
        const items = def.groups.reduce((sum, group) => sum + (group.items?.length ?? 0), 0);
        return { ok: true, problems: [], items };
      } catch (error) {
        const problems = error instanceof AppError ? ((error.details as { problems?: WorkloadProblem[] } | undefined)?.problems ?? []) : [];
        return { ok: false, items: 0, problems: problems.length > 0 ? problems.map(({ line, column, field, message }) => ({ line, column, field, message })) : [{ line: null, column: null, field: '', message: (error as Error).message }] };
      }
    },
  };
}
