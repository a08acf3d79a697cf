import path from 'node:path';
import type { WorkloadInfo, WorkloadsService } from '../../shared/contract';
import { AppError } from '../core/errors';
import type { ServerAddress } from '../core/server-address';
import { readTextFileCapped } from '../core/read-capped';
import { estimatingTokenCounter, llamaServerTokenCounter } from '../workload/token-counter';
import { workloadPathWithin, type ServiceAccess } from './access';
import {
  builtinWorkloadDir,
  listBuiltinWorkloads,
  MAX_WORKLOAD_FILE_BYTES,
  parseWorkloadText,
  readWorkloadFile,
  type WorkloadProblem,
} from '../workload/parse-workload';

/** How many items get a token count in the preview: enough to see the shape of a set. */
const PREVIEW_ITEMS = 200;

export function createWorkloadsService(access: ServiceAccess, tokenizer: () => ServerAddress | null = () => null): WorkloadsService {
  return {
    async list(): Promise<WorkloadInfo[]> {
      return Promise.all(
        listBuiltinWorkloads().map(async (name) => {
          const file = path.join(builtinWorkloadDir(), `${name}.yaml`);
          const def = await readWorkloadFile(file);
          return { name, file, description: def.description ?? '', groups: def.groups.map((group) => group.name), builtin: true };
        }),
      );
    },
    async read(name) {
      const file = await workloadPathWithin(access, name);
      return { name, file, text: await readTextFileCapped(file, 'workload file', MAX_WORKLOAD_FILE_BYTES) };
    },
    async validate(text) {
      try {
        const def = parseWorkloadText(text, 'editor');
        const written = def.groups.flatMap((group) => group.items ?? []);
        const server = tokenizer();
        const counter = server ? llamaServerTokenCounter(server) : estimatingTokenCounter;
        const tokens = [];
        for (const item of written.slice(0, PREVIEW_ITEMS)) {
          const input = item.messages ? item.messages.map((message) => message.content).join('\n') : (item.prompt ?? '');
          tokens.push({
            id: item.id,
            inputTokens: await counter.count(input).catch(() => estimatingTokenCounter.count(input)),
            maxTokens: item.max_tokens ?? def.defaults?.max_tokens ?? null,
          });
        }
        return { ok: true, problems: [], items: written.length, tokens, tokensExact: counter.exact };
      } catch (error) {
        const problems = error instanceof AppError ? ((error.details as { problems?: WorkloadProblem[] } | undefined)?.problems ?? []) : [];
        return {
          ok: false,
          items: 0,
          tokens: [],
          tokensExact: false,
          problems:
            problems.length > 0
              ? problems.map(({ line, column, field, message }) => ({ line, column, field, message }))
              : [{ line: null, column: null, field: '', message: (error as Error).message }],
        };
      }
    },
  };
}
