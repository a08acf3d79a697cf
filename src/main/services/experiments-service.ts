import { profileWithin } from './access';
import { assertImagesServed } from '../workload/item-images';
import type {
  DecisionRecord,
  ExperimentListItem,
  ExperimentTaskProgress,
  ExperimentsService,
  StartExperimentSpec,
} from '../../shared/contract';
import type { ExperimentResult } from '../../shared/contract/experiments';
import { ErrorCode } from '../../shared/errors';
import { firstProblem } from './spec-problem';
import { AppError } from '../core/errors';
import { ExperimentStore } from '../store/experiment-store';
import { applySettings, assertValidProfile } from '../engines/llamacpp/profile-rules';
import { checkExperimentSpec } from './experiment-spec';
import { kindEntryOf, kindReportOf } from './experiment-kinds';
import type { ExperimentCommon } from './experiment-kind-entry';
import { taskMethods, type LaunchedTask, type TaskControl } from './tasks';
import type { WorkServiceDeps } from './service-deps';
import { WindowCooldown } from '../experiments/window-cooldown';

/** What a caller awaiting an experiment (the CLI) hears while it goes. */
export interface ExperimentHooks {
  onStatus?: (line: string) => void;
  signal?: AbortSignal;
}

/** The experiments service plus the awaitable form in-process callers get. */
export interface LocalExperimentsService extends ExperimentsService {
  /** Starts an experiment like `start` and resolves with its result; aborting `signal` cancels it. */
  run(spec: StartExperimentSpec, hooks?: ExperimentHooks): Promise<ExperimentResult>;
}

/** Everything start checks before it opens a job: the spec, its files, the profile and every setting it will apply. */
async function checkExperimentStart(deps: WorkServiceDeps, spec: StartExperimentSpec) {
  const checked = await checkExperimentSpec(spec, deps.access);
  const profile = await profileWithin(
    deps.access,
    applySettings(deps.store.profiles.get(spec.profileName || 'default'), spec.settings ?? []),
  );
  assertValidProfile(profile);
  assertImagesServed(checked.workload.def, profile.projector);
  for (const { label, settings } of kindEntryOf(spec).settingsToCheck?.(spec) ?? [])
    try {
      assertValidProfile(await profileWithin(deps.access, applySettings(profile, settings)));
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      throw new AppError(error.code, `${label} ${settings.join(', ')}: ${error.message}`, error.details);
    }
  return { checked, profile };
}

/** Which condition was chosen from a finished experiment, on which runs, under which criteria, and why. */
function recordDecision(
  experiments: ExperimentStore,
  experimentId: string,
  chosen: string,
  reason: string,
  decidedBy: string,
): DecisionRecord {
  const experiment = experiments.get(experimentId);
  if (!experiment?.result) throw new AppError(ErrorCode.NotFound, `No finished experiment ${experimentId}`);
  const condition = experiment.result.conditions.find((candidate) => candidate.name === chosen);
  if (!condition)
    throw new AppError(
      ErrorCode.InvalidInput,
      `Choose one of ${experiment.result.conditions.map((candidate) => candidate.name).join(', ')}`,
    );
  if (!reason.trim()) throw new AppError(ErrorCode.InvalidInput, 'A decision needs a reason');
  const record = {
    experiment_id: experiment.id,
    kind: experiment.kind,
    chosen,
    chosen_run_ids: condition.run_ids,
    criteria: 'constraints' in experiment.result.protocol ? (experiment.result.protocol.constraints ?? null) : null,
    recommendation: experiment.result.recommendation,
    reason,
    decided_by: decidedBy || 'unknown',
    decided_at: new Date().toISOString(),
  };
  const id = experiments.recordDecision(experiment.id, record.decided_by, record);
  return { decision_id: id, ...record };
}

/** A stored experiment as the list shows it: its recommendation's reason once it finished. */
function experimentListItem(row: ReturnType<ExperimentStore['list']>[number]): ExperimentListItem {
  return {
    experimentId: row.id,
    kind: row.kind,
    status: row.status,
    createdAt: row.created_at,
    recommendation: row.result_json ? (JSON.parse(row.result_json) as ExperimentResult).recommendation.reason : null,
  };
}

export function createExperimentsService(deps: WorkServiceDeps): LocalExperimentsService {
  const experiments = new ExperimentStore(deps.store.db);
  const { tasks } = deps;

  async function launch(spec: StartExperimentSpec, hooks: ExperimentHooks = {}): Promise<LaunchedTask<ExperimentResult>> {
    const { checked, profile } = await checkExperimentStart(deps, spec);
    const common = async (task: TaskControl<ExperimentTaskProgress>): Promise<ExperimentCommon> => ({
      // The GPUs' idle state, read before the experiment loads anything.
      cooldown: spec.cooldownS ? await WindowCooldown.begin(spec.cooldownS) : null,
      runs: deps.store.runs,
      experiments,
      servers: await deps.servers(),
      engine: deps.engine,
      workload: checked.workload,
      profile,
      repeats: checked.repeats,
      requestsPerWindow: checked.requestsPerWindow,
      concurrency: checked.concurrency,
      signal: task.signal,
      onStatus: (line: string) => {
        hooks.onStatus?.(line);
        task.running(line);
      },
    });
    return tasks.launch<ExperimentTaskProgress, ExperimentResult>({
      kind: 'experiment',
      detail: { result: null },
      cancelledMessage: 'cancelled: stored as interrupted, with the windows that finished',
      async work(task) {
        task.running();
        return kindEntryOf(spec).run(await common(task), spec, checked);
      },
      settle(progress, result) {
        progress.detail.result = result;
        progress.message = 'finished';
      },
    });
  }

  return {
    ...taskMethods(tasks, launch),
    validate: (spec) => firstProblem(() => checkExperimentStart(deps, spec)),
    list: async () => experiments.list().map(experimentListItem),
    async get(experimentId) {
      const experiment = experiments.get(experimentId);
      if (!experiment) throw new AppError(ErrorCode.NotFound, `No experiment ${experimentId}`);
      return experiment.result;
    },
    async report(experimentId) {
      const experiment = experiments.get(experimentId);
      if (!experiment?.result)
        throw new AppError(ErrorCode.NotFound, `Experiment ${experimentId} has no results to report (it did not finish)`);
      const { renderExperimentReport } = await import('../experiments/report');
      const html = renderExperimentReport(experiment.result, await kindReportOf(experiment.result.kind));
      return { fileName: `inferlab-${experiment.kind}-${experiment.id.slice(0, 8)}.html`, html };
    },
    decide: async (experimentId, chosen, reason, decidedBy) => recordDecision(experiments, experimentId, chosen, reason, decidedBy),
    decisions: async () => experiments.decisions(),
  };
}
