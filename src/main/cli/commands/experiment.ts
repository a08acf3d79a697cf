import fs from 'node:fs';
import path from 'node:path';
import type { StartExperimentSpec } from '../../../shared/contract';
import { ErrorCode } from '../../../shared/errors';
import { EXPERIMENT_DEFAULTS } from '../../../shared/experiment-defaults';
import { AppError } from '../../core/errors';
import { parseQuantFiles } from '../../models/quant-files';
import { shellAccess } from '../../services/access';
import { checkExperimentShape, checkExperimentSpec } from '../../services/experiment-spec';
import { constraintsFromFlags } from '../quant-flags';
import { quantFilesFromHub, type QuantsFromHub } from '../quant-from-hub';
import { quantsFlag } from '../plan-table';
import { CAPACITY_DEFAULTS } from '../../../shared/experiment-defaults';
import { experimentTable } from '../experiment-table';
import { COMMAND_CALLS } from '../command-contract';
import { KVCACHE_FLAGS, kvCacheFromFlags } from '../kinds/kvcache';
import { parseOptions, percentileOption, positiveInteger, type CommandHandler } from '../args';
import { progressWriter } from '../progress';
import { openCliServices } from '../service-context';
import { formatTable } from '../format';
import { parseSlo } from './run';
import { EXPERIMENT_USAGE as USAGE, REPORT_USAGE, DECIDE_USAGE } from '../usage';

/** The kinds `inferlab experiment` takes: one "experiment KIND" entry each in the command table. */
const EXPERIMENT_KINDS_ON_THE_CLI = Object.keys(COMMAND_CALLS)
  .filter((command) => command.startsWith('experiment '))
  .map((command) => command.slice('experiment '.length) as StartExperimentSpec['kind']);

/** argv → the spec the UI sends, plus what only the terminal wants (database, JSON, a report file). */
export function experimentSpecFromArgs(args: string[]): {
  spec: StartExperimentSpec;
  output: { db?: string; json?: boolean; report?: string };
  /** Set by --from: the files come from the hub once planned and pulled, and the spec is checked then. */
  fromHub: QuantsFromHub | null;
} {
  const [named, ...rest] = args;
  const kind = EXPERIMENT_KINDS_ON_THE_CLI.find((entry) => entry === named);
  if (!kind) throw new AppError(ErrorCode.Usage, `Unknown experiment "${named ?? ''}"\n\nUsage: ${USAGE}`);
  const { values } = parseOptions(
    rest,
    {
      model: { type: 'string' },
      workload: { type: 'string' },
      quants: { type: 'string' },
      repeats: { type: 'string' },
      requests: { type: 'string' },
      concurrency: { type: 'string' },
      'skip-cache-reset': { type: 'boolean' },
      'vram-budget': { type: 'string' },
      'min-agreement': { type: 'string' },
      'min-acceptance': { type: 'string' },
      slo: { type: 'string' },
      'kld-text': { type: 'string' },
      files: { type: 'string' },
      from: { type: 'string' },
      'max-kld': { type: 'string' },
      'acceptance-alpha': { type: 'string' },
      objective: { type: 'string' },
      profile: { type: 'string' },
      set: { type: 'string', multiple: true },
      db: { type: 'string' },
      json: { type: 'boolean' },
      report: { type: 'string' },
      vary: { type: 'string' },
      load: { type: 'string' },
      'cold-starts': { type: 'string' },
      cooldown: { type: 'string' },
      'max-answer-tokens': { type: 'string' },
      percentile: { type: 'string' },
      by: { type: 'string' },
      start: { type: 'string' },
      'max-load': { type: 'string' },
      'keep-cache': { type: 'boolean' },
      draft: { type: 'string' },
      'draft-max': { type: 'string' },
      ...KVCACHE_FLAGS,
    },
    USAGE,
  );
  const usage = (message: string): never => {
    throw new AppError(ErrorCode.Usage, `${message}\n\nUsage: ${USAGE}`);
  };
  if (values.files !== undefined && (kind !== 'quant' || values.model !== undefined || values.quants !== undefined))
    usage('--files replaces --model and --quants, and only in experiment quant');
  if (values.from !== undefined && (kind !== 'quant' || values.model !== undefined || values.files !== undefined))
    usage('--from replaces --model and --files, and only in experiment quant');
  const fromHub = values.from === undefined ? null : quantsFromHubFlags(values.from, values.quants, usage);
  const files = values.files === undefined ? null : parseQuantFiles(values.files).map((file) => ({ name: file.name, path: file.file }));
  if (!values.model && !files && !fromHub) usage('--model is required');
  if (kind === 'kvcache' && values.quants !== undefined) usage('--quants is for experiment quant; experiment kvcache takes --types');
  const quants = (values.quants ?? 'f16,q8_0,q4_k_m')
    .split(',')
    .map((quant) => quant.trim().toLowerCase())
    .filter(Boolean);
  if (kind === 'quant' && !files && !fromHub && (quants.length < 2 || quants.some((quant) => !/^[a-z0-9_]+$/.test(quant))))
    usage(`--quants needs two or more types like f16,q8_0,q4_k_m, got "${values.quants}"`);
  const slo = parseSlo(values.slo);
  let vary: { field: string; values: string[] } | null = null;
  let loadConcurrencies: number[] | null = null;
  if (kind === 'sweep') {
    const match = /^([\w-]+)=(.+)$/.exec(values.vary ?? '');
    if (!match) usage(`--vary expects FIELD=V1,V2,..., got "${values.vary ?? ''}"`);
    vary = {
      field: match![1]!,
      values: match![2]!
        .split(',')
        .map((value) => value.trim())
        .filter(Boolean),
    };
    if (vary.values.length < 2) usage('--vary needs at least two values');
    if (values.load !== undefined) {
      const load = /^concurrency=([\d,]+)$/.exec(values.load);
      if (!load) usage(`--load expects concurrency=1,4,16, got "${values.load}"`);
      loadConcurrencies = load![1]!
        .split(',')
        .filter(Boolean)
        .map((value) => positiveInteger('load', value, 1));
    }
  }
  const capacityOnly = ['percentile', 'by', 'start', 'max-load', 'keep-cache'] as const;
  for (const flag of capacityOnly)
    if (kind !== 'capacity' && values[flag] !== undefined) usage(`--${flag} is for experiment capacity only`);
  const loadNumber = (flag: string, text: string | undefined): number | null => {
    if (text === undefined) return null;
    const value = Number(text);
    if (!Number.isFinite(value) || value <= 0) usage(`--${flag} must be a positive number, got "${text}"`);
    return value;
  };
  for (const flag of ['draft', 'draft-max'] as const)
    if (kind !== 'spec' && values[flag] !== undefined) usage(`--${flag} is for experiment spec only`);
  if (kind === 'spec' && !values.draft) usage('experiment spec needs --draft: a smaller model with the same vocabulary, e.g. demo:q4_k_m');
  const draftMax =
    values['draft-max'] === undefined
      ? null
      : values['draft-max']
          .split(',')
          .filter(Boolean)
          .map((value) => positiveInteger('draft-max', value.trim(), 1));
  for (const flag of Object.keys(KVCACHE_FLAGS) as (keyof typeof KVCACHE_FLAGS)[])
    if (kind !== 'kvcache' && values[flag] !== undefined) usage(`--${flag} is for experiment kvcache only`);
  let capacity: StartExperimentSpec['capacity'] = null;
  if (kind === 'capacity') {
    if (values.by !== undefined && values.by !== 'rate' && values.by !== 'concurrency' && values.by !== 'users')
      usage(`--by must be rate, concurrency or users, got "${values.by}"`);
    if (!slo) usage('experiment capacity needs --slo, e.g. --slo ttft=500,tpot=50');
    const percentile = percentileOption(values.percentile, CAPACITY_DEFAULTS.percentile, USAGE);
    capacity = {
      by: (values.by as 'rate' | 'concurrency' | 'users' | undefined) ?? 'rate',
      percentile,
      start: loadNumber('start', values.start),
      maxLoad: loadNumber('max-load', values['max-load']),
      keepCache: values['keep-cache'] ?? false,
    };
  }
  // The same spec the UI sends; every flag has its field.
  const spec: StartExperimentSpec = {
    kind,
    model: values.model ?? '',
    quants: fromHub ? [] : quants,
    files,
    workload: values.workload ?? '',
    repeats: positiveInteger('repeats', values.repeats, EXPERIMENT_DEFAULTS.repeats),
    requestsPerWindow:
      values.requests === undefined
        ? kind === 'capacity'
          ? null
          : EXPERIMENT_DEFAULTS.requestsPerWindow
        : positiveInteger('requests', values.requests, 1),
    concurrency: positiveInteger('concurrency', values.concurrency, 1),
    profileName: values.profile ?? 'default',
    settings: values.set ?? [],
    constraints:
      kind === 'quant' || kind === 'kvcache'
        ? constraintsFromFlags(values, slo)
        : { vramBudgetMib: null, minAgreement: null, minAcceptance: null, slo },
    kldTextFile: values['kld-text'] ? path.resolve(values['kld-text']) : null,
    coldStarts: values['cold-starts'] === undefined ? null : positiveInteger('cold-starts', values['cold-starts'], 1),
    cooldownS: values.cooldown === undefined ? null : positiveInteger('cooldown', values.cooldown, 1),
    maxAnswerTokens:
      values['max-answer-tokens'] === undefined ? null : positiveInteger('max-answer-tokens', values['max-answer-tokens'], 1),
    skipCacheReset: values['skip-cache-reset'] ?? false,
    vary,
    loadConcurrencies,
    capacity,
    draftModel: kind === 'spec' ? values.draft! : null,
    draftMax,
    kvCache: kind === 'kvcache' ? kvCacheFromFlags(values) : null,
  };
  if (!fromHub)
    try {
      checkExperimentShape(spec);
    } catch (error) {
      usage((error as Error).message);
    }
  return { spec, output: { db: values.db, json: values.json, report: values.report }, fromHub };
}

function quantsFromHubFlags(source: string, quants: string | undefined, usage: (message: string) => never): QuantsFromHub {
  if (!source.startsWith('hf:')) usage(`--from takes a hub name, hf:OWNER/REPO[@REVISION], got "${source}"`);
  if (quants === undefined) usage('--from needs --quants: two or more of the quantizations the repository has (Q8_0,Q4_K_M), or all');
  const chosen = quantsFlag(quants, USAGE);
  if (chosen !== 'all' && chosen.length < 2) usage(`--quants needs two or more quantizations to compare, got "${quants}"`);
  return { source, quants: chosen };
}

export const experimentCommand: CommandHandler = async (args, signal) => {
  const { spec, output, fromHub } = experimentSpecFromArgs(args);
  // Files and models are checked before the database is opened (from the hub, once they are pulled).
  const access = shellAccess();
  if (!fromHub) await checkExperimentSpec(spec, access);
  const container = await openCliServices(output.db, access);
  try {
    const progress = progressWriter();
    if (fromHub) {
      const profile = await container.servers.profileWith(spec.profileName ?? 'default', spec.settings ?? []);
      spec.files = await quantFilesFromHub(fromHub, profile, container, progress, signal);
      try {
        checkExperimentShape(spec);
      } catch (error) {
        throw new AppError(ErrorCode.Usage, `${(error as Error).message}\n\nUsage: ${USAGE}`);
      }
      await checkExperimentSpec(spec, access);
    }
    const result = await container.experiments.run(spec, { signal, onStatus: (line) => progress.line(line) });
    if (output.report)
      fs.writeFileSync(path.resolve(output.report), (await container.services.experiments.report(result.experiment_id)).html);
    if (output.json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    else process.stdout.write(`${experimentTable(result)}\n`);
    return 0;
  } finally {
    await container.dispose();
  }
};

export const reportCommand: CommandHandler = async (args) => {
  const { values, positionals } = parseOptions(args, { out: { type: 'string' }, db: { type: 'string' } }, REPORT_USAGE, true);
  if (positionals.length !== 1 || !values.out)
    throw new AppError(ErrorCode.Usage, `report needs one experiment id and --out FILE.html\n\nUsage: ${REPORT_USAGE}`);
  const container = await openCliServices(values.db, shellAccess());
  try {
    const { html } = await container.services.experiments.report(positionals[0]!);
    fs.writeFileSync(path.resolve(values.out), html);
    process.stdout.write(`${path.resolve(values.out)}\n`);
    return 0;
  } finally {
    await container.dispose();
  }
};

/** A decision record: which condition was chosen from an experiment, on which runs, under which criteria, and why. */
export const decideCommand: CommandHandler = async (args) => {
  const { values, positionals } = parseOptions(
    args,
    { choose: { type: 'string' }, reason: { type: 'string' }, by: { type: 'string' }, db: { type: 'string' }, json: { type: 'boolean' } },
    DECIDE_USAGE,
    true,
  );
  if (positionals.length !== 1 || !values.choose || !values.reason)
    throw new AppError(ErrorCode.Usage, `decide needs an experiment id, --choose and --reason\n\nUsage: ${DECIDE_USAGE}`);
  const container = await openCliServices(values.db, shellAccess());
  try {
    const record = await container.services.experiments.decide(
      positionals[0]!,
      values.choose,
      values.reason,
      values.by ?? process.env.USER ?? 'unknown',
    );
    process.stdout.write(
      values.json ? `${JSON.stringify(record, null, 2)}\n` : `decision ${record.decision_id}: ${record.chosen} (${record.reason})\n`,
    );
    return 0;
  } finally {
    await container.dispose();
  }
};

export const decisionsCommand: CommandHandler = async (args) => {
  const { values } = parseOptions(args, { db: { type: 'string' }, json: { type: 'boolean' } }, DECIDE_USAGE);
  const container = await openCliServices(values.db, shellAccess());
  try {
    const decisions = await container.services.experiments.decisions();
    if (values.json) process.stdout.write(`${JSON.stringify(decisions, null, 2)}\n`);
    else
      process.stdout.write(
        `${formatTable([['decided', 'by', 'experiment', 'chosen', 'reason'], ...decisions.map((decision) => [decision.decided_at.slice(0, 19), decision.decided_by, decision.experiment_id.slice(0, 8), decision.chosen, decision.reason])])}\n`,
      );
    return 0;
  } finally {
    await container.dispose();
  }
};
