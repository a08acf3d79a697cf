import type { StartExperimentSpec } from '../../shared/contract';
import type { QuantConstraints } from '../../shared/contract/experiments';
import { generatesText } from '../../shared/contract/server';
import { EXPERIMENT_DEFAULTS } from '../../shared/experiment-defaults';
import { invalidSpec as invalid, wholeNumber } from '../experiments/spec-checks';
import { capAnswerTokens } from '../workload/cap-answers';
import { readWorkloadFile } from '../workload/read-workload';
import { workloadServes } from '../workload/workload-serves';
import { EXPERIMENT_KIND_NAMES, isExperimentKind, kindEntryOf } from './experiment-kinds';
import { generatorFilesWithin, resolveModelWithin, workloadPathWithin, type ServiceAccess } from './access';
import type { CheckedExperiment } from './experiment-kind-entry';

export type { CheckedExperiment } from './experiment-kind-entry';

const NO_CONSTRAINTS: QuantConstraints = { vramBudgetMib: null, minAgreement: null, minAcceptance: null, slo: null };

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

/** The checks that need no file, database or server: kinds, numbers and combinations. */
export function checkExperimentShape(spec: StartExperimentSpec): void {
  if (typeof spec !== 'object' || spec === null) invalid('an experiment spec must be an object');
  const kinds = EXPERIMENT_KIND_NAMES;
  if (!isExperimentKind(spec.kind))
    invalid(`kind must be ${kinds.slice(0, -1).join(', ')} or ${kinds.at(-1)}, got ${JSON.stringify(spec.kind)}`);
  wholeNumber('repeats', spec.repeats, EXPERIMENT_DEFAULTS.repeats, 1000);
  wholeNumber('requests per window', spec.requestsPerWindow, EXPERIMENT_DEFAULTS.requestsPerWindow);
  wholeNumber('concurrency', spec.concurrency, 1, 4096);
  const entry = kindEntryOf(spec);
  if (!entry.namesFiles?.(spec) && (typeof spec.model !== 'string' || spec.model === '')) invalid('model is required');
  entry.checkShape?.(spec);
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
  const entry = kindEntryOf(spec);
  const file = await workloadPathWithin(access, spec.workload || (entry.defaultWorkloadFor?.(spec) ?? entry.defaultWorkload));
  // Generator files by the real location checked, which is what the experiment then reads.
  const read = await generatorFilesWithin(access, await readWorkloadFile(file), file);
  const serves = workloadServes(read);
  // Every kind judges generated answers (TTFT, TPOT, agreement) and starts its servers for them; a sweep also measures embeddings.
  if (!generatesText(serves) && !(serves === 'embeddings' && entry.measuresEmbeddings))
    invalid(
      `${file} is ${serves === 'rerank' ? 'a reranking' : 'an embeddings'} workload: this experiment compares generated answers; measure it with a run (inferlab run --workload ${file})${serves === 'embeddings' ? ', or sweep its batch (inferlab experiment sweep --vary inputs_per_request=1,4,16)' : ''}`,
    );
  entry.checkWorkload?.(spec, read);
  const workload = { def: spec.maxAnswerTokens ? capAnswerTokens(read, spec.maxAnswerTokens) : read, file };
  const model = entry.namesFiles?.(spec) ? null : { ref: spec.model, path: await resolveModelWithin(access, spec.model) };
  const own = await entry.resolve?.(spec, access, model);
  return {
    workload,
    model,
    own,
    repeats: wholeNumber('repeats', spec.repeats, EXPERIMENT_DEFAULTS.repeats, 1000),
    requestsPerWindow: wholeNumber('requests per window', spec.requestsPerWindow, EXPERIMENT_DEFAULTS.requestsPerWindow),
    concurrency: wholeNumber('concurrency', spec.concurrency, 1, 4096),
    constraints: checkConstraints(spec.constraints),
  };
}
