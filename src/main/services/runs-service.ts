import { parquetFolder, profileWithin, resolveModelWithin } from './access';
import { ExperimentStore } from '../store/experiment-store';
import type { CheckResult } from '../../shared/contract/check';
import type { CheckQuery } from '../experiments/regression-check';
import type { RunDetail, RunJobState, RunListItem, RunsService, StartRunSpec } from '../../shared/contract';
import type { ComparedRun, Comparison, ComparisonRow } from '../../shared/contract/compare';
import type { RunSummary } from '../../shared/contract/runs';
import { ErrorCode, USAGE_ERROR_CODES } from '../../shared/errors';
import { AppError, toErrorShape } from '../core/errors';
import { bootstrapDifference } from '../metrics/compare';
import type { RunProgress } from '../runner/run-executor';
import type { RunTargetSpec } from '../runner/run-workload';
import { applySettings } from '../engines/llamacpp/profile-rules';
import { slotsForUsers } from '../runner/conversation-slots';
import { renderRunExport, runManifest } from '../store/export-run';
import { exportParquet, type ParquetScope } from '../store/parquet-export';
import { readRunExport } from '../store/read-run-export';
import { RUN_EXPORT_SCHEMA_VERSION } from '../store/run-export-schema';
import { saveImportedRun } from '../store/save-imported-run';
import type { RunHead } from '../store/run-store';
import { metricHistory } from '../experiments/build-history';
import { parseMetricSpec } from '../store/run-history';
import { checkRunSpec } from './run-spec';
import { JobTable, jobMethods, type LaunchedJob } from './jobs';
import type { WorkServiceDeps } from './service-deps';
import { startingRunJob } from '../../shared/run-job';
import { METRIC_TABLE } from '../../shared/metric-table';

const PROGRESS_INTERVAL_MS = 200;
/** Points per CDF sent to the UI: quantiles every 0.1 %, plenty for a plot, small to transfer and draw. */
const CDF_SAMPLE_CAP = 1000;

/** A stored summary when it has the run summary's shape; null for none, and for the flat one-request summaries older first-request runs stored. */
function storedRunSummary(json: string | null): RunSummary | null {
  if (!json) return null;
  const parsed = JSON.parse(json) as Partial<RunSummary>;
  return typeof parsed.metrics === 'object' && typeof parsed.throughput === 'object' ? (parsed as RunSummary) : null;
}

function listItem(run: RunHead): RunListItem {
  return {
    runId: run.id,
    startedAt: run.started_at,
    status: run.status,
    statusReason: run.status_reason,
    model: run.model_ref,
    quantization: run.model_file_type ?? (run.model_ref?.startsWith('demo:') ? run.model_ref.slice(5).toUpperCase() : null),
    engine:
      run.engine_origin === 'endpoint'
        ? 'endpoint'
        : run.has_engine
          ? `llama.cpp${run.engine_backend ? ` · ${run.engine_backend}` : ''}`
          : null,
    workload: run.workload_name,
    kind: run.kind,
    requests: run.request_count,
    ttftP50: run.ttft_p50,
    outputTokensPerS: run.output_tokens_per_s,
    importedFrom: run.imported_from,
  };
}

/** Evenly spaced order statistics: the CDF's shape in at most CDF_SAMPLE_CAP points. */
function sample(values: number[]): number[] {
  if (values.length <= CDF_SAMPLE_CAP) return values;
  const sorted = Float64Array.from(values).sort();
  return Array.from({ length: CDF_SAMPLE_CAP }, (_, i) => sorted[Math.floor((i * (sorted.length - 1)) / (CDF_SAMPLE_CAP - 1))]!);
}

/** What a caller awaiting a run (the CLI) hears while it goes. */
export interface RunHooks {
  onStatus?: (line: string) => void;
  /** The run is stored and about to send its first request. */
  onRunCreated?: (runId: string) => void;
  onProgress?: (progress: RunProgress) => void;
  signal?: AbortSignal;
}

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
  dispose(): Promise<void>;
}

export function createRunsService(deps: WorkServiceDeps & { onActiveChange?: (active: boolean) => void }): LocalRunsService {
  const jobs = new JobTable();
  const runs = deps.store.runs;

  function compare(runIds: string[]): Comparison {
    if (runIds.length < 2) throw new AppError(ErrorCode.InvalidInput, 'Pick at least two runs to compare');
    const compared: (ComparedRun & { summary: RunSummary | null })[] = runIds.map((id) => {
      const run = runs.findRun(id);
      if (!run) throw new AppError(ErrorCode.NotFound, `No run ${id}`);
      const rows = runs.latencies(run.id);
      const pick = (key: 'ttft_ms' | 'tpot_ms' | 'e2e_ms') =>
        rows.map((row) => row[key]).filter((value): value is number => value !== null);
      const summary = storedRunSummary(run.summary_json);
      return {
        runId: run.id,
        label: `${run.id.slice(0, 8)} ${run.model_ref ?? ''} ${run.workload_name ?? ''}`.trim(),
        status: run.status,
        model: run.model_ref,
        workload: run.workload_name,
        workloadRevision: run.workload_revision,
        requests: rows.length,
        ttftMs: pick('ttft_ms'),
        tpotMs: pick('tpot_ms'),
        e2eMs: pick('e2e_ms'),
        vramPeakMib: summary?.telemetry?.gpu?.peak_used_mib ?? null,
        summary,
        outputTokensPerS: summary?.throughput?.output_tokens_per_s ?? null,
        ttftP95Ms: summary?.metrics?.ttft_ms.p95 ?? null,
        groups: Object.fromEntries(
          Object.entries(summary?.groups ?? {}).map(([name, group]) => [
            name,
            { ttftP50Ms: group.metrics.ttft_ms.p50, requests: group.requests.attempted },
          ]),
        ),
        vramTimeline: (runs.telemetry(run.id).find((series) => series.series === 'gpu0.memory_used')?.points ?? []).filter(
          (_, index, all) => all.length <= 2000 || index % Math.ceil(all.length / 2000) === 0,
        ),
      };
    });
    const rows: ComparisonRow[] = [];
    for (const [metric, key] of [
      ['TTFT', 'ttftMs'],
      ['TPOT', 'tpotMs'],
      ['E2E', 'e2eMs'],
    ] as const) {
      for (const statistic of ['p50', 'p95'] as const) {
        const results = compared.map((run, index) => (index === 0 ? null : bootstrapDifference(compared[0]![key], run[key], statistic)));
        rows.push({
          metric: `${metric} ${statistic}`,
          unit: 'ms',
          values: compared.map((_run, index) => (index === 0 ? (results[1]?.a ?? null) : results[index]!.b)),
          differences: results.map((result) =>
            result ? { difference: result.difference, ci: result.ci, verdict: result.verdict, note: result.note } : null,
          ),
        });
      }
    }
    rows.push({
      metric: 'output tokens/s',
      unit: METRIC_TABLE.output_tokens_per_s.unit,
      values: compared.map((run) => run.summary?.throughput.output_tokens_per_s ?? null),
      differences: compared.map(() => null),
    });
    rows.push({
      metric: 'accepted-task rate',
      unit: '%',
      values: compared.map((run) =>
        run.summary?.accepted_rate === null || run.summary?.accepted_rate === undefined ? null : run.summary.accepted_rate * 100,
      ),
      differences: compared.map(() => null),
    });
    rows.push({ metric: 'VRAM peak', unit: 'MiB', values: compared.map((run) => run.vramPeakMib), differences: compared.map(() => null) });
    // One value per run, no interval: a run is one window, and energy or bandwidth has no per-request spread to bootstrap.
    const perRun = (metric: string, unit: string, value: (summary: RunSummary | null) => number | null | undefined) =>
      rows.push({ metric, unit, values: compared.map((run) => value(run.summary) ?? null), differences: compared.map(() => null) });
    perRun('energy per output token', 'J', (summary) => summary?.telemetry?.energy?.joules_per_output_token);
    perRun('decode bandwidth', 'GB/s', (summary) => summary?.decode_bandwidth?.effective_gb_per_s);
    perRun('decode bandwidth of peak', '%', (summary) => {
      const utilization = summary?.decode_bandwidth?.utilization;
      return utilization === null || utilization === undefined ? null : utilization * 100;
    });
    const notes: string[] = [];
    if (new Set(compared.map((run) => run.workloadRevision)).size > 1)
      notes.push('The runs used different workload revisions: their requests differ, so differences are not only the server’s.');
    if (compared.some((run) => run.status !== 'completed'))
      notes.push('Some runs did not complete; their figures cover the requests that were stored.');
    return {
      runs: compared.map(({ summary: _summary, ...run }) => ({
        ...run,
        ttftMs: sample(run.ttftMs),
        tpotMs: sample(run.tpotMs),
        e2eMs: sample(run.e2eMs),
      })),
      rows,
      notes,
    };
  }

  async function launch(spec: StartRunSpec, hooks: RunHooks = {}): Promise<LaunchedJob<RunSummary>> {
    const checked = await checkRunSpec(spec, deps.access);
    const reference = spec.referenceRunId ? runs.findRun(spec.referenceRunId) : null;
    if (spec.referenceRunId && !reference) throw new AppError(ErrorCode.NotFound, `reference: no run ${spec.referenceRunId}`);
    const target: RunTargetSpec =
      checked.target.kind === 'model'
        ? {
            ...checked.target,
            profile: slotsForUsers(
              await profileWithin(deps.access, applySettings(deps.store.profiles.get(spec.profileName || 'default'), spec.settings ?? [])),
              checked.request,
              spec.settings ?? [],
              hooks.onStatus,
            ),
            force: Boolean(spec.force),
          }
        : checked.target;

    const { jobId, controller } = jobs.open();
    const state: RunJobState = startingRunJob(jobId);
    let lastEmit = 0;
    let sampleSeq: number | null = null;
    let finishedAtSample = 0;
    const emit = (force = false) => {
      const now = performance.now();
      if (!force && now - lastEmit < PROGRESS_INTERVAL_MS) return;
      lastEmit = now;
      deps.events.emit('run.progress', { ...state, ttftPoints: [...state.ttftPoints] });
      state.ttftPoints = [];
    };
    const result = (async () => {
      try {
        // The runner loads with the first run: listing and reading runs need none of it.
        const [{ runWorkload }, servers] = await Promise.all([import('../runner/run-workload'), deps.servers()]);
        const { summary } = await runWorkload({
          request: { ...checked.request, target, referenceRunId: reference?.id ?? null },
          store: runs,
          servers,
          engine: deps.engine,
          signal: controller.signal,
          onStatus: (message) => {
            state.message = message;
            hooks.onStatus?.(message);
            emit(true);
          },
          onRunCreated: (runId) => {
            hooks.onRunCreated?.(runId);
            state.runId = runId;
            state.phase = 'running';
            emit(true);
          },
          onProgress: (progress) => {
            state.sent = progress.sent;
            if (progress.finished > state.finished && progress.lastTtftMs !== null && progress.lastSentAtMs !== null && !progress.warmup)
              state.ttftPoints.push([progress.lastSentAtMs, progress.lastTtftMs]);
            state.finished = progress.finished;
            state.failed = progress.failed;
            if (progress.finished > finishedAtSample) {
              finishedAtSample = progress.finished;
              sampleSeq = null;
            }
            hooks.onProgress?.(progress);
            emit();
          },
          onText: (seq, text) => {
            if (sampleSeq === null) {
              sampleSeq = seq;
              state.sampleText = '';
            }
            if (seq === sampleSeq) state.sampleText = (state.sampleText + text).slice(-4000);
          },
          onTelemetry: (session) => session.ticks.on((tick) => deps.events.emit('telemetry.tick', { jobId, tick })),
        });
        state.summary = summary;
        state.outputTokensPerS = summary.throughput.output_tokens_per_s;
        state.phase = 'finished';
        state.message = `run ${summary.status}`;
        return summary;
      } catch (error) {
        state.phase = 'failed';
        state.error = toErrorShape(error);
        state.message = state.error.message;
        throw error;
      } finally {
        emit(true);
        jobs.close(jobId);
        if (jobs.size === 0) deps.onActiveChange?.(false);
      }
    })();
    jobs.track(jobId, result);
    deps.onActiveChange?.(true);
    return { jobId, done: result };
  }

  const methods = jobMethods(jobs, launch);
  return {
    ...methods,
    async check(query, hooks = {}) {
      const { runRegressionCheck } = await import('../experiments/regression-check');
      return runRegressionCheck({
        store: runs,
        experiments: new ExperimentStore(deps.store.db),
        query,
        run: (spec, _side, baselineServer) => {
          if (!baselineServer) return methods.run(spec, hooks);
          if (!hooks.runOnServer)
            throw new AppError(ErrorCode.InvalidInput, 'this caller cannot measure on the baseline engine; drop --interleave');
          return hooks.runOnServer(spec, baselineServer);
        },
        modelSha256: async (ref) => runs.hashes.hash(await resolveModelWithin(deps.access, ref)),
        onStatus: hooks.onStatus,
      });
    },
    async list(limit) {
      return runs.listRunHeads(limit ?? 500).map(listItem);
    },
    async page({ offset, limit, search }) {
      const terms = (search ?? '').split(/\s+/).filter(Boolean);
      return { items: runs.listRunHeads(limit, null, { offset, terms }).map(listItem), total: runs.countRuns(terms) };
    },
    async get(runId): Promise<RunDetail> {
      const run = runs.findRun(runId);
      if (!run) throw new AppError(ErrorCode.NotFound, `No run ${runId}`);
      const marks = runs
        .requestsForSummary(run.id)
        .filter((row) => row.warmup === 0)
        .map((row): [number, number | null] => [row.t0_ms, row.ttft_ms]);
      return {
        item: listItem(runs.listRunHeads(1, run.id)[0]!),
        summary: storedRunSummary(run.summary_json),
        manifest: runManifest(run),
        telemetry: runs.telemetry(run.id),
        requestMarks: marks,
      };
    },
    async validate(spec) {
      try {
        await checkRunSpec(spec, deps.access);
        return { problem: null };
      } catch (error) {
        if (error instanceof AppError && USAGE_ERROR_CODES.includes(error.code)) return { problem: error.message };
        throw error;
      }
    },
    async remove(runId) {
      // A run still writing, here or in another process, is refused; opening the database marks the runs of dead processes interrupted.
      if (runs.findRun(runId)?.status === 'running')
        throw new AppError(ErrorCode.InvalidInput, 'This run is still running; cancel it first');
      return runs.deleteRun(runId);
    },
    async exportRun(runId) {
      const { run, ...files } = renderRunExport(runs, runId);
      return { fileBase: `inferlab-run-${run.id.slice(0, 8)}`, ...files };
    },
    async exportParquet(request) {
      if (request.runId && request.experimentId)
        throw new AppError(ErrorCode.InvalidInput, 'exportParquet takes a run or an experiment (or neither, for every run), not both');
      const scope: ParquetScope = request.runId
        ? { runId: request.runId }
        : request.experimentId
          ? { experimentId: request.experimentId }
          : { all: true };
      return exportParquet(deps.store.db, runs, scope, await parquetFolder(deps.access.paths, request.folder ?? null));
    },
    async importRun(folder) {
      // The folder and each file in it by real location: a symlink inside the roots cannot lead a request out of them.
      const within = (file: string) => deps.access.paths.check(file, 'results');
      const exported = await readRunExport(await within(folder), { checkFile: within });
      saveImportedRun(deps.store.db, exported, {
        from: exported.folder,
        at: new Date().toISOString(),
        schema_version: RUN_EXPORT_SCHEMA_VERSION,
      });
      return {
        runId: exported.manifest.run_id,
        requests: exported.requests.length,
        telemetrySeries: exported.telemetry.length,
        importedFrom: exported.folder,
      };
    },
    compare: async (runIds) => compare(runIds),
    async history(query) {
      return metricHistory(deps.store, { ...parseMetricSpec(query.metric), model: query.model, workload: query.workload, key: query.key });
    },
    async dispose() {
      await jobs.cancelAll();
    },
  };
}
