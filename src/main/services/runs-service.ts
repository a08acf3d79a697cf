import { resolveModelWithin } from './access';
import { ExperimentStore } from '../store/experiment-store';
import type { RunStore } from '../store/run-store';
import type { CheckResult } from '../../shared/contract/check';
import type { CheckQuery } from '../experiments/regression-check';
import type { LiveRaceRequest, RunsService, RunTaskProgress, StartRunSpec } from '../../shared/contract';
import type { Race } from '../../shared/race';
import { launchLiveRace, type RaceHooks } from './live-race';
import { startingRunDetail } from '../../shared/tasks';
import type { RunSummary } from '../../shared/contract/runs';
import { ErrorCode } from '../../shared/errors';
import { firstProblem } from './spec-problem';
import { AppError } from '../core/errors';
import { compareRuns } from './compare-runs';
import { raceLanes } from './race-lanes';
import { exportParquetOf, importRunFolder, listedRuns, listItem, runDetail } from './run-records';
import { renderRunExport } from '../store/export-run';
import { metricHistory } from '../experiments/build-history';
import { parseMetricSpec } from '../store/run-history';
import { checkRunSpec } from './run-spec';
import { runTaskCallbacks, runTargetOf, type RunHooks } from './run-task';

export type { RunHooks } from './run-task';
import { awaitTask, taskMethods, type LaunchedTask } from './tasks';
import type { WorkServiceDeps } from './service-deps';

export interface CheckHooks extends RunHooks {
  /**
   * Measures a run on another llama-server than this service's: the baseline's own build, for
   * an interleaved check. Absent, such a check is refused.
   */
  runOnServer?: (spec: StartRunSpec, serverPath: string) => Promise<RunSummary>;
}

/** The runs service plus what only in-process callers get: the awaitable form of a run. */
export interface LocalRunsService extends RunsService {
  /** Starts a run like `start` and resolves with its summary; aborting `signal` cancels it. */
  run(spec: StartRunSpec, hooks?: RunHooks): Promise<RunSummary>;
  /** The regression gate (CLI only: it may measure with any engine the person at the shell names). */
  check(query: CheckQuery, hooks?: CheckHooks): Promise<CheckResult>;
  /** Measures a race like `startRace` and resolves with it; aborting `signal` cancels every lane. */
  raceLive(request: LiveRaceRequest, hooks?: RaceHooks): Promise<Race>;
}

/** The regression gate, measuring with this service's runs (or, interleaved, on the baseline's own engine). */
async function regressionCheck(
  deps: WorkServiceDeps,
  run: (spec: StartRunSpec, hooks: RunHooks) => Promise<RunSummary>,
  query: CheckQuery,
  hooks: CheckHooks,
): Promise<CheckResult> {
  const { runRegressionCheck } = await import('../experiments/regression-check');
  return runRegressionCheck({
    store: deps.store.runs,
    experiments: new ExperimentStore(deps.store.db),
    query,
    run: (spec, _side, baselineServer) => {
      if (!baselineServer) return run(spec, hooks);
      if (!hooks.runOnServer)
        throw new AppError(ErrorCode.InvalidInput, 'this caller cannot measure on the baseline engine; drop --interleave');
      return hooks.runOnServer(spec, baselineServer);
    },
    modelSha256: async (ref) => deps.store.runs.hashes.hash(await resolveModelWithin(deps.access, ref)),
    onStatus: hooks.onStatus,
  });
}

/** Stored requests as a race; a lane that was an experiment's window is named by its condition. */
function storedRace(deps: WorkServiceDeps, requests: string[]): Race {
  const experiments = new ExperimentStore(deps.store.db);
  return raceLanes(deps.store.runs, requests, (runId) => experiments.windowOfRun(runId));
}

function removeRun(runs: RunStore, runId: string): boolean {
  // The run the id or prefix names, as everywhere else: never another run whose whole id is that text.
  const run = runs.findRun(runId);
  if (!run) return false;
  // A run still writing, here or in another process, is refused; opening the database marks the runs of dead processes interrupted.
  if (run.status === 'running') throw new AppError(ErrorCode.InvalidInput, 'This run is still running; cancel it first');
  return runs.deleteRun(run.id);
}

/** A live run's progress goes out at most this often; a status line or a change of phase at once. */
const RUN_PROGRESS_INTERVAL_MS = 200;

export function createRunsService(deps: WorkServiceDeps): LocalRunsService {
  const { tasks } = deps;
  const runs = deps.store.runs;

  async function launch(spec: StartRunSpec, hooks: RunHooks = {}, access = deps.access): Promise<LaunchedTask<RunSummary>> {
    const checked = await checkRunSpec(spec, access);
    const reference = spec.referenceRunId ? runs.findRun(spec.referenceRunId) : null;
    if (spec.referenceRunId && !reference) throw new AppError(ErrorCode.NotFound, `reference: no run ${spec.referenceRunId}`);
    const target = await runTargetOf(spec, checked, deps, hooks);
    const { requests } = checked.request.stop;
    return tasks.launch<RunTaskProgress, RunSummary>({
      kind: 'run',
      detail: startingRunDetail(),
      total: requests === null ? null : requests + checked.request.warmup,
      sendIntervalMs: RUN_PROGRESS_INTERVAL_MS,
      cancelledMessage: 'cancelled: the finished requests are stored',
      async work(task) {
        // The runner loads with the first run: listing and reading runs need none of it.
        const [{ runWorkload }, servers] = await Promise.all([import('../runner/run-workload'), deps.servers()]);
        const { jobId } = task.progress;
        const { summary } = await runWorkload({
          request: { ...checked.request, target, referenceRunId: reference?.id ?? null },
          store: runs,
          servers,
          engine: deps.engine,
          signal: task.signal,
          ...runTaskCallbacks(task, hooks),
          atStartLine: hooks.atStartLine,
          onTelemetry: (session) => session.ticks.on((tick) => deps.events.emit('telemetry.tick', { jobId, tick })),
        });
        return summary;
      },
      settle(progress, summary) {
        progress.detail.summary = summary;
        progress.detail.outputTokensPerS = summary.throughput.output_tokens_per_s;
        progress.message = `run ${summary.status}`;
      },
    });
  }

  const methods = taskMethods(tasks, launch);
  const launchRace = async (request: LiveRaceRequest, hooks: RaceHooks = {}) =>
    launchLiveRace(tasks, request, hooks, {
      access: deps.access,
      run: async (spec, runHooks, access) => awaitTask(await launch(spec, runHooks, access), tasks, runHooks.signal),
      race: (runIds) => storedRace(deps, runIds),
    });
  const raceMethods = taskMethods(tasks, launchRace);

  return {
    ...methods,
    startRace: raceMethods.start,
    raceLive: raceMethods.run,
    check: async (query, hooks = {}) => regressionCheck(deps, methods.run, query, hooks),
    async list(limit) {
      // A run whose record cannot be read is left out; `page` and the CLI name it.
      return runs.listRunHeads(limit ?? 500).map(listItem);
    },
    async page({ offset, limit, search }) {
      const terms = (search ?? '').split(/\s+/).filter(Boolean);
      return { ...listedRuns(runs.readRunHeads(limit, null, { offset, terms })), total: runs.countRuns(terms) };
    },
    get: async (runId) => runDetail(runs, runId),
    validate: (spec) => firstProblem(() => checkRunSpec(spec, deps.access)),
    remove: async (runId) => removeRun(runs, runId),
    async exportRun(runId) {
      const { run, ...files } = renderRunExport(runs, runId);
      return { fileBase: `inferlab-run-${run.id.slice(0, 8)}`, ...files };
    },
    exportParquet: async (request) => exportParquetOf(deps, request),
    importRun: async (folder) => importRunFolder(deps, folder),
    compare: async (runIds) => compareRuns(runs, runIds),
    race: async (requests) => storedRace(deps, requests),
    async history(query) {
      return metricHistory(deps.store, { ...parseMetricSpec(query.metric), model: query.model, workload: query.workload, key: query.key });
    },
  };
}
