import type { StartExperimentSpec } from '../../shared/contract';
import type { QuantConstraints } from '../../shared/contract/experiments';
import { ErrorCode } from '../../shared/errors';
import { EXPERIMENT_DEFAULTS } from '../../shared/experiment-defaults';
import { AppError } from '../core/errors';
import { readTextFileCapped } from '../core/read-capped';
import { quantFilesOf } from '../experiments/kinds/quant/protocol';
import { checkQuantFiles, type QuantFile } from '../models/quant-files';
import { capAnswerTokens } from '../workload/cap-answers';
import { hasConversations } from '../runner/conversation-slots';
import { isDemoRef } from '../models/demo-models';
import { readWorkloadFile } from '../workload/parse-workload';
import type { WorkloadDef } from '../workload/workload-types';
import { EXPERIMENT_KINDS } from './experiment-kinds';
import { generatorFilesWithin, resolveModelWithin, workloadPathWithin, type ServiceAccess } from './access';

/** An experiment spec checked against the face's rights, with files read and models resolved. */
export interface CheckedExperiment {
  workload: { def: WorkloadDef; file: string };
  repeats: number;
  requestsPerWindow: number;
  concurrency: number;
  /** warmcold, sweep: the served model; quant without files: the base model. */
  model: { ref: string; path: string } | null;
  files: QuantFile[] | null;
  quants: string[];
  constraints: QuantConstraints;
  kldText: { text: string; source: string } | null;
  /** spec: the draft model, a demo ref or a file inside the roots, and the draft limits to compare. */
  draft: { model: string; max: number[] } | null;
}

export const DEFAULT_DRAFT_MAX = [4, 8, 16];
/** Users are conversations: a capacity in users runs the built-in conversations unless told otherwise. */
const USERS_WORKLOAD = 'multi-turn-chat';
const NO_CONSTRAINTS: QuantConstraints = { vramBudgetMib: null, minAgreement: null, minAcceptance: null, slo: null };

function invalid(message: string): never {
  throw new AppError(ErrorCode.InvalidInput, message);
}

function wholeNumber(name: string, value: number | null | undefined, fallback: number, max = 1_000_000): number {
  if (value === null || value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1 || value > max)
    invalid(`${name} must be a whole number from 1 to ${max}, got ${JSON.stringify(value)}`);
  return value;
}

function checkConstraints(raw: QuantConstraints | null | undefined): QuantConstraints {
  if (raw === null || raw === undefined) return NO_CONSTRAINTS;
  if (typeof raw !== 'object') invalid('constraints must be an object');
  const fraction = (name: string, value: number | null | undefined) => {
    if (value !== null && value !== undefined && (typeof value !== 'number' || !(value >= 0 && value <= 1)))
      invalid(`constraints.${name} must be a fraction from 0 to 1, got ${JSON.stringify(value)}`);
  };
  fraction('minAgreement', raw.minAgreement);
  fraction('minAcceptance', raw.minAcceptance);
  if (raw.maxKld != null && !(typeof raw.maxKld === 'number' && raw.maxKld >= 0))
    invalid(`constraints.maxKld must be 0 or more nats, got ${JSON.stringify(raw.maxKld)}`);
  if (raw.acceptanceAlpha != null && !(typeof raw.acceptanceAlpha === 'number' && raw.acceptanceAlpha > 0 && raw.acceptanceAlpha < 0.5))
    invalid(`constraints.acceptanceAlpha must be above 0 and below 0.5, got ${JSON.stringify(raw.acceptanceAlpha)}`);
  if (raw.vramBudgetMib != null && !(Number.isInteger(raw.vramBudgetMib) && raw.vramBudgetMib > 0))
    invalid(`constraints.vramBudgetMib must be a whole number of MiB, got ${JSON.stringify(raw.vramBudgetMib)}`);
  if (raw.objective !== undefined && !['memory', 'tpot', 'ttft'].includes(raw.objective))
    invalid(`constraints.objective must be memory, tpot or ttft, got ${JSON.stringify(raw.objective)}`);
  if (
    raw.disabledGates !== undefined &&
    (!Array.isArray(raw.disabledGates) || raw.disabledGates.some((gate) => !['acceptance', 'token agreement', 'kld'].includes(gate)))
  )
    invalid('constraints.disabledGates may name acceptance, token agreement and kld');
  return { ...NO_CONSTRAINTS, ...raw };
}

function checkCapacity(spec: StartExperimentSpec): void {
  const capacity = spec.capacity;
  if (!capacity || typeof capacity !== 'object')
    invalid('a capacity experiment needs capacity: { by, percentile, start, maxLoad, keepCache }');
  if (capacity.by !== 'rate' && capacity.by !== 'concurrency' && capacity.by !== 'users')
    invalid(`capacity.by must be rate, concurrency or users, got ${JSON.stringify(capacity.by)}`);
  if (typeof capacity.percentile !== 'number' || !(capacity.percentile >= 50 && capacity.percentile <= 99.9))
    invalid(`the percentile must be from 50 to 99.9, got ${JSON.stringify(capacity.percentile)}`);
  const slo = spec.constraints?.slo;
  if (!slo || (slo.ttft_ms === undefined && slo.tpot_ms === undefined && slo.e2e_ms === undefined))
    invalid('a capacity experiment needs an SLO: --slo ttft=MS,tpot=MS (any of ttft, tpot, e2e)');
  const minimum = capacity.by === 'rate' ? 0.05 : 1;
  for (const [name, value] of [
    ['start', capacity.start],
    ['maxLoad', capacity.maxLoad],
  ] as const) {
    if (value === null || value === undefined) continue;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < minimum || (capacity.by !== 'rate' && !Number.isInteger(value)))
      invalid(
        `capacity.${name} must be ${capacity.by === 'rate' ? 'a rate of at least 0.05 req/s' : 'a whole number of at least 1'}, got ${JSON.stringify(value)}`,
      );
  }
  if (capacity.start != null && capacity.maxLoad != null && capacity.start > capacity.maxLoad)
    invalid(`capacity.start (${capacity.start}) is above capacity.maxLoad (${capacity.maxLoad})`);
}

function checkDraft(spec: StartExperimentSpec): void {
  if (typeof spec.draftModel !== 'string' || spec.draftModel.trim() === '')
    invalid('a spec experiment needs a draft model: --draft demo:q4_k_m or a GGUF path with the same vocabulary as --model');
  const limits = spec.draftMax ?? DEFAULT_DRAFT_MAX;
  if (!Array.isArray(limits) || limits.length === 0) invalid('draftMax needs at least one limit, like 4,8,16');
  for (const limit of limits) wholeNumber('draftMax', limit, 1, 256);
  if (new Set(limits).size !== limits.length) invalid(`draftMax lists a limit twice: ${limits.join(',')}`);
}

/** The checks that need no file, database or server: kinds, numbers and combinations. */
export function checkExperimentShape(spec: StartExperimentSpec): void {
  if (typeof spec !== 'object' || spec === null) invalid('an experiment spec must be an object');
  const kinds = Object.keys(EXPERIMENT_KINDS);
  if (typeof spec.kind !== 'string' || !Object.hasOwn(EXPERIMENT_KINDS, spec.kind))
    invalid(`kind must be ${kinds.slice(0, -1).join(', ')} or ${kinds.at(-1)}, got ${JSON.stringify(spec.kind)}`);
  wholeNumber('repeats', spec.repeats, EXPERIMENT_DEFAULTS.repeats, 1000);
  wholeNumber('requests per window', spec.requestsPerWindow, EXPERIMENT_DEFAULTS.requestsPerWindow);
  wholeNumber('concurrency', spec.concurrency, 1, 4096);
  const hasFiles = Array.isArray(spec.files) && spec.files.length > 0;
  if (hasFiles && spec.kind !== 'quant') invalid('files are for quant experiments only');
  if (!hasFiles && (typeof spec.model !== 'string' || spec.model === '')) invalid('model is required');
  if (
    spec.kind === 'quant' &&
    !hasFiles &&
    (!Array.isArray(spec.quants) ||
      spec.quants.length < 2 ||
      spec.quants.some((quant) => typeof quant !== 'string' || !/^[a-z0-9_]+$/i.test(quant)))
  ) {
    invalid(`quants needs two or more types like f16,q8_0,q4_k_m, got ${JSON.stringify(spec.quants)}`);
  }
  if (spec.kind === 'sweep') {
    const vary = spec.vary;
    if (!vary || typeof vary.field !== 'string' || !Array.isArray(vary.values) || vary.values.length < 2)
      invalid('a sweep needs vary: a profile field and at least two values');
    for (const level of spec.loadConcurrencies ?? []) wholeNumber('load concurrency', level, 1, 4096);
  }
  if (spec.kind === 'warmcold') wholeNumber('coldStarts', spec.coldStarts, 1, 1000);
  if (spec.kind === 'capacity') checkCapacity(spec);
  if (spec.kind === 'spec') checkDraft(spec);
  EXPERIMENT_KINDS[spec.kind].checkShape?.(spec);
  wholeNumber('maxAnswerTokens', spec.maxAnswerTokens, 1, 1_000_000);
  wholeNumber('cooldownS', spec.cooldownS, 1, 3600);
  if (spec.settings != null && (!Array.isArray(spec.settings) || spec.settings.some((setting) => typeof setting !== 'string')))
    invalid('settings must be a list of FIELD=VALUE strings');
  checkConstraints(spec.constraints);
}

/**
 * The one check of an experiment spec, for every face: the CLI calls it before it opens the
 * database, the service before it starts the job. Every path is held to the face's roots.
 */
export async function checkExperimentSpec(spec: StartExperimentSpec, access: ServiceAccess): Promise<CheckedExperiment> {
  checkExperimentShape(spec);
  const file = await workloadPathWithin(
    access,
    spec.workload ||
      (spec.kind === 'capacity' && spec.capacity?.by === 'users' ? USERS_WORKLOAD : EXPERIMENT_KINDS[spec.kind].defaultWorkload),
  );
  const read = await readWorkloadFile(file);
  await generatorFilesWithin(access, read, file);
  if (spec.kind === 'capacity' && spec.capacity?.by === 'users' && !hasConversations(read))
    invalid(
      `a capacity in users needs a conversation workload (items with "turns", or the conversations generator, as in ${USERS_WORKLOAD}); ${read.name} has none: use --by concurrency`,
    );
  const workload = { def: spec.maxAnswerTokens ? capAnswerTokens(read, spec.maxAnswerTokens) : read, file };
  const files =
    spec.kind === 'quant' && Array.isArray(spec.files) && spec.files.length > 0
      ? await checkQuantFiles(
          await Promise.all(
            spec.files.map(async (entry) => ({
              name: String(entry?.name ?? ''),
              file: await access.paths.check(String(entry?.path ?? ''), 'model'),
            })),
          ),
          // The CLI's flag by its own name.
          access.face === 'shell' ? '--files' : 'files',
        )
      : null;
  const model = files ? null : { ref: spec.model, path: await resolveModelWithin(access, spec.model) };
  // The quantizations a quant experiment reads or makes beside its model are held to the same roots.
  if (spec.kind === 'quant' && model && !isDemoRef(model.ref))
    for (const { file: sibling } of await quantFilesOf(model.path, quantNames(spec))) await access.paths.check(sibling, 'model');
  let kldText: CheckedExperiment['kldText'] = null;
  if (spec.kldTextFile) {
    const source = await access.paths.check(spec.kldTextFile, 'text');
    kldText = { text: await readTextFileCapped(source, 'evaluation text'), source };
  }
  const draft =
    spec.kind === 'spec'
      ? {
          model: isDemoRef(spec.draftModel!) ? spec.draftModel! : await resolveModelWithin(access, spec.draftModel!),
          max: spec.draftMax ?? DEFAULT_DRAFT_MAX,
        }
      : null;
  return {
    workload,
    files,
    model,
    kldText,
    draft,
    repeats: wholeNumber('repeats', spec.repeats, EXPERIMENT_DEFAULTS.repeats, 1000),
    requestsPerWindow: wholeNumber('requests per window', spec.requestsPerWindow, EXPERIMENT_DEFAULTS.requestsPerWindow),
    concurrency: wholeNumber('concurrency', spec.concurrency, 1, 4096),
    quants: quantNames(spec),
    constraints: checkConstraints(spec.constraints),
  };
}

const quantNames = (spec: StartExperimentSpec): string[] => (spec.quants ?? []).map((quant) => quant.trim().toLowerCase());
