import fs from 'node:fs';
import path from 'node:path';
import type { HubModelMatch, ModelEntry } from '../../../shared/contract/models';
import { ErrorCode } from '../../../shared/errors';
import { AppError } from '../../core/errors';
import { checkQuantTypes, planQuantization } from '../../models/quantize';
import { resolveModelWithin, shellAccess } from '../../services/access';
import { parseOptions, type CommandHandler } from '../args';
import { openCliServices } from '../service-context';
import { formatTable } from '../format';
import { SCAN_USAGE, PLAN_USAGE, PULL_USAGE, QUANTIZE_USAGE, SEARCH_USAGE } from '../usage';
import { pullProgressPrinter, pullSummary } from '../pull-lines';
import { progressWriter } from '../progress';
import { quantsFlag } from '../args';
import { planRequestFromFlags, planText } from '../plan-table';

function humanSize(bytes: number): string {
  return bytes >= 1 << 30 ? `${(bytes / (1 << 30)).toFixed(2)} GiB` : `${(bytes / (1 << 20)).toFixed(1)} MiB`;
}

function humanParams(count: number | null): string {
  if (count === null) return '—';
  return count >= 1e9 ? `${(count / 1e9).toFixed(2)}B` : `${(count / 1e6).toFixed(1)}M`;
}

function modelRows(models: readonly ModelEntry[]): string[][] {
  return [
    ['model', 'arch', 'params', 'quant', 'size', 'ctx', 'status'],
    ...models.map((model) => [
      model.path + (model.parts.length > 1 ? ` (+${model.parts.length - 1} parts)` : ''),
      model.architecture ?? '—',
      humanParams(model.parameterCount),
      model.quantization ?? '—',
      humanSize(model.sizeBytes),
      String(model.contextLength ?? '—'),
      model.valid ? (model.synthetic ? 'ok (synthetic)' : 'ok') : `INVALID: ${model.invalidReason}`,
    ]),
  ];
}

const scan: CommandHandler = async (args) => {
  const { values, positionals } = parseOptions(
    args,
    { json: { type: 'boolean' }, hash: { type: 'boolean' }, db: { type: 'string' } },
    SCAN_USAGE,
    true,
  );
  const explicit = positionals.length > 0;
  const container = await openCliServices(values.db, shellAccess());
  let result;
  try {
    const shown = new Map<string, number>();
    result = await container.models.scanWithProgress(explicit ? positionals : null, {
      hash: values.hash ?? false,
      onHashProgress: (file, done, total) => {
        const percent = Math.floor((done / total) * 100);
        if (percent >= (shown.get(file) ?? -10) + 10) {
          shown.set(file, percent);
          process.stderr.write(`hashing ${path.basename(file)}: ${percent}%\n`);
        }
      },
    });
  } finally {
    await container.dispose();
  }
  if (values.json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  else {
    process.stdout.write(`${formatTable(modelRows(result.models))}\n`);
    for (const problem of result.problems) process.stderr.write(`${problem}\n`);
  }
  if (result.problems.length > 0) return 2;
  // Naming a single bad file is a usage error; finding bad files in a folder is a report.
  if (
    explicit &&
    positionals.length === 1 &&
    result.models.length === 1 &&
    !result.models[0]!.valid &&
    !fs.statSync(positionals[0]!).isDirectory()
  )
    return 2;
  return 0;
};

const quantize: CommandHandler = async (args, signal) => {
  const { values, positionals } = parseOptions(
    args,
    { to: { type: 'string' }, out: { type: 'string' }, json: { type: 'boolean' }, db: { type: 'string' } },
    QUANTIZE_USAGE,
    true,
  );
  if (positionals.length !== 1 || !values.to)
    throw new AppError(ErrorCode.Usage, `models quantize needs one SRC and --to\n\nUsage: ${QUANTIZE_USAGE}`);
  const types = values.to
    .split(',')
    .map((type) => type.trim())
    .filter(Boolean);
  try {
    checkQuantTypes(types);
  } catch {
    throw new AppError(ErrorCode.Usage, `--to expects quantization types like Q8_0,Q4_K_M, got "${values.to}"`);
  }
  // The plan is checked before the database is opened: a bad source or an existing target writes nothing.
  const access = shellAccess();
  const source = await resolveModelWithin(access, positionals[0]!);
  await planQuantization(source, types, values.out ? path.resolve(values.out) : null);
  const container = await openCliServices(values.db, access);
  try {
    const shown = new Map<string, number>();
    const made = await container.models.quantizeAndWait(source, types, values.out ? path.resolve(values.out) : null, {
      signal,
      onProgress: (type, done, total) => {
        const percent = total ? Math.floor((done / total) * 100) : 0;
        if (!values.json && percent >= (shown.get(type) ?? -1) + 10) {
          shown.set(type, percent);
          process.stderr.write(`quantizing ${type}: ${done}/${total} tensors (${percent}%)\n`);
        }
      },
    });
    if (values.json) process.stdout.write(`${JSON.stringify(made, null, 2)}\n`);
    else process.stdout.write(`${formatTable(modelRows(made))}\n`);
    return 0;
  } finally {
    await container.dispose();
  }
};

const plan: CommandHandler = async (args) => {
  const { values, positionals } = parseOptions(
    args,
    {
      quants: { type: 'string' },
      ctx: { type: 'string' },
      parallel: { type: 'string' },
      kv: { type: 'string' },
      'no-flash-attn': { type: 'boolean' },
      for: { type: 'string' },
      json: { type: 'boolean' },
      db: { type: 'string' },
    },
    PLAN_USAGE,
    true,
  );
  if (positionals.length !== 1)
    throw new AppError(
      ErrorCode.Usage,
      `models plan needs one source: a hub name (hf:OWNER/REPO), a GGUF file or a folder\n\nUsage: ${PLAN_USAGE}`,
    );
  const request = planRequestFromFlags(positionals[0]!, values);
  const container = await openCliServices(values.db, shellAccess());
  let result;
  try {
    result = await container.models.plan(request);
  } finally {
    await container.dispose();
  }
  if (values.json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  else process.stdout.write(`${planText(result)}\n`);
  for (const problem of result.problems) process.stderr.write(`${problem}\n`);
  return result.candidates.length === 0 ? 2 : 0;
};

const search: CommandHandler = async (args) => {
  const { values, positionals } = parseOptions(args, { json: { type: 'boolean' }, db: { type: 'string' } }, SEARCH_USAGE, true);
  const words = positionals.join(' ').trim();
  if (!words) throw new AppError(ErrorCode.Usage, `models search needs words of a model's name, e.g. qwen3 8b\n\nUsage: ${SEARCH_USAGE}`);
  const container = await openCliServices(values.db, shellAccess());
  let matches;
  try {
    matches = await container.models.search(words);
  } finally {
    await container.dispose();
  }
  if (values.json) process.stdout.write(`${JSON.stringify(matches, null, 2)}\n`);
  else if (matches.length === 0) process.stdout.write(`no repository with GGUF files matches "${words}"\n`);
  else process.stdout.write(`${formatTable(searchRows(matches))}\n`);
  return matches.length === 0 ? 2 : 0;
};

function searchRows(matches: readonly HubModelMatch[]): string[][] {
  return [
    ['repository', 'downloads', 'likes', 'updated', 'access'],
    ...matches.map((match) => [
      match.source,
      match.downloads.toLocaleString('en-US'),
      match.likes.toLocaleString('en-US'),
      match.updatedAt?.slice(0, 10) ?? '—',
      match.gated ? 'gated: accept the licence, set HF_TOKEN' : 'open',
    ]),
  ];
}

const pull: CommandHandler = async (args, signal) => {
  const { values, positionals } = parseOptions(
    args,
    { quants: { type: 'string' }, json: { type: 'boolean' }, db: { type: 'string' } },
    PULL_USAGE,
    true,
  );
  if (positionals.length !== 1 || !positionals[0]!.startsWith('hf:'))
    throw new AppError(ErrorCode.Usage, `models pull needs one hub name: hf:OWNER/REPO[@REVISION]\n\nUsage: ${PULL_USAGE}`);
  const quants = quantsFlag(values.quants, PULL_USAGE);
  const container = await openCliServices(values.db, shellAccess());
  const progress = progressWriter(process.stderr);
  const printProgress = pullProgressPrinter(progress);
  try {
    const result = await container.models.pullAndWait(
      { source: positionals[0]!, quants: quants === 'all' ? ['all'] : quants },
      {
        signal,
        onProgress: (step) => {
          if (!values.json) printProgress(step);
        },
      },
    );
    progress.end();
    if (values.json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    else process.stdout.write(`${pullSummary(result)}\n`);
    for (const problem of result.problems) process.stderr.write(`${problem}\n`);
    return 0;
  } finally {
    progress.end();
    await container.dispose();
  }
};

export const modelsCommand: CommandHandler = async (args, signal) => {
  const [action, ...rest] = args;
  if (action === 'scan') return scan(rest, signal);
  if (action === 'search') return search(rest, signal);
  if (action === 'plan') return plan(rest, signal);
  if (action === 'pull') return pull(rest, signal);
  if (action === 'quantize') return quantize(rest, signal);
  throw new AppError(
    ErrorCode.Usage,
    `Unknown models action "${action ?? ''}"\n\nUsage: ${SCAN_USAGE}\n       ${SEARCH_USAGE}\n       ${PLAN_USAGE}\n       ${PULL_USAGE}\n       ${QUANTIZE_USAGE}`,
  );
};
