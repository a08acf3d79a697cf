import fs from 'node:fs';
import path from 'node:path';
import type { StartExperimentSpec } from '../../../shared/contract';
import { ErrorCode } from '../../../shared/errors';
import { EXPERIMENT_DEFAULTS } from '../../../shared/experiment-defaults';
import { AppError } from '../../core/errors';
import { didYouMean } from '../../core/closest-name';
import { shellAccess } from '../../services/access';
import { checkExperimentShape, checkExperimentSpec } from '../../services/experiment-spec';
import type { QuantsFromHub } from '../quant-from-hub';
import { experimentTable } from '../experiment-table';
import { COMMAND_CALLS } from '../command-contract';
import { CLI_KINDS, cliKindOf, GATE_KINDS, kindsInWords } from '../kinds/registry';
import { parseOptions, positiveInteger, type CommandHandler } from '../args';
import { progressWriter } from '../progress';
import { openCliServices } from '../service-context';
import { formatTable } from '../format';
import { parseSlo } from './run';
import { EXPERIMENT_USAGE as USAGE, REPORT_USAGE, DECIDE_USAGE, experimentUsageOf } from '../usage';

/** The kinds `inferlab experiment` takes: one "experiment KIND" entry each in the command table. */
const EXPERIMENT_KINDS_ON_THE_CLI = Object.keys(COMMAND_CALLS)
  .filter((command) => command.startsWith('experiment '))
  .map((command) => command.slice('experiment '.length) as StartExperimentSpec['kind']);

/** Earlier names of a kind (its entry's `formerNames`), still taken so that scripts written with them keep working. */
const FORMER_KIND_NAMES = new Map(
  Object.entries(CLI_KINDS).flatMap(([kind, entry]) =>
    (entry.formerNames ?? []).map((former) => [former, kind as StartExperimentSpec['kind']] as const),
  ),
);

/** Flags every kind takes; each kind's own come from its entry in cli/kinds/registry.ts. */
const SHARED_FLAGS = {
  model: { type: 'string' },
  workload: { type: 'string' },
  repeats: { type: 'string' },
  requests: { type: 'string' },
  concurrency: { type: 'string' },
  'vram-budget': { type: 'string' },
  'min-agreement': { type: 'string' },
  'min-acceptance': { type: 'string' },
  slo: { type: 'string' },
  'kld-text': { type: 'string' },
  'max-kld': { type: 'string' },
  'acceptance-alpha': { type: 'string' },
  objective: { type: 'string' },
  profile: { type: 'string' },
  set: { type: 'string', multiple: true },
  db: { type: 'string' },
  json: { type: 'boolean' },
  report: { type: 'string' },
  cooldown: { type: 'string' },
  'max-answer-tokens': { type: 'string' },
} as const;

/** Each kind's own flags, with the kinds that take them (--fixed is both quant's and warmcold's). */
const KINDS_OF_FLAG = new Map<string, string[]>();
for (const [kind, entry] of Object.entries(CLI_KINDS))
  for (const flag of Object.keys(entry.options?.flags ?? {})) KINDS_OF_FLAG.set(flag, [...(KINDS_OF_FLAG.get(flag) ?? []), kind]);
const KIND_FLAGS = Object.fromEntries(Object.values(CLI_KINDS).flatMap((entry) => Object.entries(entry.options?.flags ?? {})));

/** argv → the spec the UI sends, plus what only the terminal wants (database, JSON, a report file). */
export function experimentSpecFromArgs(args: string[]): {
  spec: StartExperimentSpec;
  output: { db?: string; json?: boolean; report?: string };
  /** Set by --from: the files come from the hub once planned and pulled, and the spec is checked then. */
  fromHub: QuantsFromHub | null;
} {
  const [named, ...rest] = args;
  const kind = EXPERIMENT_KINDS_ON_THE_CLI.find((entry) => entry === (FORMER_KIND_NAMES.get(named ?? '') ?? named));
  if (!kind) {
    const problem = named
      ? `Unknown experiment "${named}"${didYouMean(named, [...EXPERIMENT_KINDS_ON_THE_CLI, ...FORMER_KIND_NAMES.keys()])}`
      : 'Name the experiment';
    throw new AppError(ErrorCode.Usage, `${problem}; the experiments are ${EXPERIMENT_KINDS_ON_THE_CLI.join(', ')}\n\nUsage: ${USAGE}`);
  }
  const kindUsage = experimentUsageOf(kind);
  const { values } = parseOptions(rest, { ...SHARED_FLAGS, ...KIND_FLAGS }, kindUsage);
  const usage = (message: string): never => {
    throw new AppError(ErrorCode.Usage, `${message}\n\nUsage: ${kindUsage}`);
  };
  for (const [flag, owners] of KINDS_OF_FLAG) {
    if (owners.includes(kind) || (values as Record<string, unknown>)[flag] === undefined) continue;
    const instead = CLI_KINDS[kind].options?.insteadOf?.[flag];
    const owner = kindsInWords(owners);
    usage(instead ? `--${flag} is for experiment ${owner}; ${instead}` : `--${flag} is for experiment ${owner} only`);
  }
  const slo = parseSlo(values.slo);
  const own = CLI_KINDS[kind].options?.fromFlags(values, { usage, slo }) ?? { fields: {} };
  if (!values.model && !own.replacesModel) usage('--model is required');
  // The same spec the UI sends: the shared fields, then the kind's own from its flags.
  const shared = {
    model: values.model ?? '',
    workload: values.workload ?? '',
    repeats: positiveInteger('repeats', values.repeats, EXPERIMENT_DEFAULTS.repeats),
    requestsPerWindow: positiveInteger('requests', values.requests, EXPERIMENT_DEFAULTS.requestsPerWindow),
    concurrency: positiveInteger('concurrency', values.concurrency, 1),
    profileName: values.profile ?? 'default',
    settings: values.set ?? [],
    constraints: { vramBudgetMib: null, minAgreement: null, minAcceptance: null, slo },
    cooldownS: values.cooldown === undefined ? null : positiveInteger('cooldown', values.cooldown, 1),
    maxAnswerTokens:
      values['max-answer-tokens'] === undefined ? null : positiveInteger('max-answer-tokens', values['max-answer-tokens'], 1),
  };
  // The kind's flags set only that kind's fields (the check above refused any other kind's), so the pair is a spec of that kind.
  const spec = { kind, ...shared, ...own.fields } as StartExperimentSpec;
  if (values['kld-text'] !== undefined && !('kldTextFile' in spec)) usage(`--kld-text is for experiment ${kindsInWords(GATE_KINDS)} only`);
  const fromHub = own.fromHub ?? null;
  if (!fromHub)
    try {
      checkExperimentShape(spec);
    } catch (error) {
      usage((error as Error).message);
    }
  return { spec, output: { db: values.db, json: values.json, report: values.report }, fromHub };
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
      await cliKindOf(spec.kind).fromHub?.(spec, fromHub, { profile, container, progress, signal });
      try {
        checkExperimentShape(spec);
      } catch (error) {
        throw new AppError(ErrorCode.Usage, `${(error as Error).message}\n\nUsage: ${experimentUsageOf(spec.kind)}`);
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
