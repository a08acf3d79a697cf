import fs from 'node:fs';
import path from 'node:path';
import type { WorkloadInfo, WorkloadsService } from '../../shared/contract';
import { AppError } from '../core/errors';
import type { ServerAddress } from '../core/server-address';
import { readTextFileCapped } from '../core/read-capped';
import { estimatingTokenCounter, llamaServerTokenCounter } from '../workload/token-counter';
import { workloadPathWithin, type ServiceAccess } from './access';
import { parseWorkloadOffThread } from '../workload/bounded-parse';
import {
  builtinWorkloadDir,
  listBuiltinWorkloads,
  MAX_WORKLOAD_FILE_BYTES,
  readWorkloadFile,
  type WorkloadProblem,
} from '../workload/parse-workload';

/** How many files of one workload folder the list reads: a folder of thousands is a mistake, not a library. */
const MAX_SAVED_PER_FOLDER = 200;
const WORKLOAD_FILE = /\.(?:ya?ml|json|jsonl)$/i;
/** Above this a file (a JSONL dataset, say) is listed by its name alone: parsing it on every list would stall the view. */
const PARSE_FOR_LIST_MAX_BYTES = 1024 * 1024;

/**
 * The workload files in the folders this face may read besides the built-ins (`<data>/workloads`
 * and `roots.workloads`), top level only. One that does not parse is listed with its problem, so
 * a person sees why their file is not usable rather than not seeing it at all.
 */
async function savedWorkloads(access: ServiceAccess): Promise<WorkloadInfo[]> {
  const folders = access.paths.roots('workload').filter((folder) => path.resolve(folder) !== path.resolve(builtinWorkloadDir()));
  const listed: WorkloadInfo[] = [];
  for (const folder of folders) {
    const names = await fs.promises.readdir(folder).catch(() => [] as string[]);
    for (const name of names
      .filter((entry) => WORKLOAD_FILE.test(entry))
      .sort()
      .slice(0, MAX_SAVED_PER_FOLDER)) {
      const file = await access.paths.check(path.join(folder, name), 'workload').catch(() => null);
      if (file) listed.push(await savedWorkload(file));
    }
  }
  return listed;
}

async function savedWorkload(file: string): Promise<WorkloadInfo> {
  const stem = path.basename(file).replace(WORKLOAD_FILE, '');
  const size = (await fs.promises.stat(file)).size;
  if (size > PARSE_FOR_LIST_MAX_BYTES)
    return {
      name: stem,
      file,
      description: `${(size / 1024 / 1024).toFixed(1)} MiB; checked when a run uses it`,
      groups: [],
      builtin: false,
    };
  try {
    const def = await readWorkloadFile(file);
    return {
      name: def.name || stem,
      file,
      description: def.description ?? '',
      groups: def.groups.map((group) => group.name),
      builtin: false,
    };
  } catch (error) {
    return { name: stem, file, description: `cannot be used: ${firstProblem(error)}`, groups: [], builtin: false };
  }
}

type ProblemDetails = { problems?: WorkloadProblem[]; total?: number } | undefined;

/** The located problems a workload parse failure carries (none for other failures). */
const problemsOf = (error: unknown): WorkloadProblem[] =>
  error instanceof AppError ? ((error.details as ProblemDetails)?.problems ?? []) : [];

/** A parse failure in one line, without the file name the list already shows beside it. */
function firstProblem(error: unknown): string {
  const problems = problemsOf(error);
  const first = problems[0];
  if (!first) return (error as Error).message.split('\n').at(-1) ?? String(error);
  const where = first.line !== null ? `line ${first.line}: ` : '';
  // Past the listed problems a parse gives only their number.
  const total = ((error as AppError).details as ProblemDetails)?.total ?? problems.length;
  const more = total > 1 ? ` (and ${total - 1} more)` : '';
  return `${where}${first.field ? `${first.field}: ` : ''}${first.message}${more}`;
}

/** How many items get a token count in the preview: enough to see the shape of a set. */
const PREVIEW_ITEMS = 200;

export function createWorkloadsService(access: ServiceAccess, tokenizer: () => ServerAddress | null = () => null): WorkloadsService {
  return {
    async list(): Promise<WorkloadInfo[]> {
      const builtin = await Promise.all(
        listBuiltinWorkloads().map(async (name) => {
          const file = path.join(builtinWorkloadDir(), `${name}.yaml`);
          const def = await readWorkloadFile(file);
          return { name, file, description: def.description ?? '', groups: def.groups.map((group) => group.name), builtin: true };
        }),
      );
      return [...builtin, ...(await savedWorkloads(access))];
    },
    async read(name) {
      const file = await workloadPathWithin(access, name);
      return { name, file, text: await readTextFileCapped(file, 'workload file', MAX_WORKLOAD_FILE_BYTES) };
    },
    async validate(text) {
      try {
        // Pasted text may cost the parser minutes: it runs on a parser thread under a deadline and a heap limit.
        const def = await parseWorkloadOffThread({ text }, 'editor', { label: 'the editor text' });
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
        const problems = problemsOf(error);
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
