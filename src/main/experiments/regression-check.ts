import type { CheckedMetric, CheckMetricResult, CheckResult, CheckSide, CheckSideName } from '../../shared/contract/check';
import type { RunSummary } from '../../shared/contract/runs';
import type { StartRunSpec } from '../../shared/contract/specs';
import { ErrorCode } from '../../shared/errors';
import { PERCENTILE_MIN_N } from '../../shared/experiment-defaults';
import { AppError } from '../core/errors';
import { isExecutable } from '../core/which';
import { percentile } from '../metrics/distribution';
import { regressionDecision } from '../metrics/regression-gate';
import type { ExperimentStore } from '../store/experiment-store';
import type { RunStore } from '../store/run-store';
import type { RunRow } from '../store/run-rows';
import { METRIC_TABLE } from '../../shared/metric-table';

/** One-sided, for the whole check: the chance of failing a build that is not slower beyond the margin. */
export const CHECK_ALPHA = 0.05;
/** Times a window other processes competed with is measured again before it is kept (and listed as contaminated). */
export const CONTAMINATED_RETRIES = 2;

export interface CheckQuery {
  /** A run, or an experiment whose condition's runs are the baseline windows. */
  baseline: string;
  condition?: string | null;
  /** Stored runs to judge instead of rerunning the baseline's configuration. */
  candidateRuns?: string[] | null;
  metrics: CheckedMetric[];
  margin: number;
  repeats: number;
  /** FIELD=VALUE over the baseline's profile for the rerun: what a candidate changes. */
  settings: string[];
  /**
   * Measure the baseline's configuration again, in windows alternated with the candidate's
   * (ABBA order), and judge the candidate against those fresh windows: whatever drifted since
   * the baseline was stored (thermals, drivers, other load) then weighs on both sides alike.
   */
  interleave?: boolean;
}

export const CHECK_RULE =
  'each run is one window; per metric a one-sided pooled t test on the logarithms of the windows’ values (a one-run baseline borrows the spread between windows from the candidate’s); a regression is declared only when the whole one-sided interval lies beyond the margin, the error rate split evenly over the metrics';

function parseJson<T>(text: string | null): T | null {
  if (!text) return null;
  try {
    return JSON.parse(text) as T;
  } catch {
    return null;
  }
}

interface Manifest {
  workload?: { name?: string; revision?: string; source?: string };
  target?: { kind?: string; model?: string; profile?: Record<string, unknown> };
  load?: {
    mode?: string;
    concurrency?: number;
    rate?: number;
    burstiness?: number;
    maxOutstanding?: number;
    rampUp?: { shape: 'linear' | 'exponential'; ms: number };
  };
  stop?: { requests?: number | null; durationMs?: number | null };
  warmup?: number;
  slo?: StartRunSpec['slo'];
  trace?: unknown;
}

function side(runs: RunRow[]): CheckSide {
  const first = runs[0]!;
  const engine = parseJson<{ commit?: string; backend?: string; serverPath?: string }>(first.engine_json);
  return {
    run_ids: runs.map((run) => run.id),
    measured_at: runs.map((run) => run.started_at).sort()[0]!,
    contaminated: runs.filter((run) => parseJson<RunSummary>(run.summary_json)?.telemetry?.contention?.contaminated).map((run) => run.id),
    bunched: runs.filter((run) => (parseJson<RunSummary>(run.summary_json)?.delivery?.bunched_requests ?? 0) > 0).map((run) => run.id),
    engine: { commit: engine?.commit ?? null, backend: engine?.backend ?? null, server_path: engine?.serverPath ?? null },
    model_sha256: first.model_sha256,
    workload_revision: first.workload_revision,
    profile: parseJson<Manifest>(first.manifest_json)?.target?.profile ?? null,
  };
}

/** The baseline's windows: the run itself, or the runs of one condition of an experiment. */
function baselineRuns(store: RunStore, experiments: ExperimentStore, query: CheckQuery): RunRow[] {
  const run = store.findRun(query.baseline);
  if (run) return [run];
  const experiment = experiments.get(query.baseline);
  if (!experiment?.result)
    throw new AppError(ErrorCode.NotFound, `--baseline ${query.baseline}: no run, and no finished experiment, with that id`);
  const name = query.condition ?? experiment.result.recommendation.choice ?? experiment.result.conditions[0]?.name;
  const condition = experiment.result.conditions.find((entry) => entry.name === name);
  if (!condition)
    throw new AppError(
      ErrorCode.InvalidInput,
      `experiment ${experiment.id.slice(0, 8)} has no condition "${name}"; its conditions: ${experiment.result.conditions.map((entry) => entry.name).join(', ')}`,
    );
  return condition.run_ids.map((id) => store.findRun(id)).filter((entry): entry is RunRow => entry !== undefined);
}

/** What makes two runs' figures comparable at all: the same model file and the same workload. */
function assertComparable(baseline: RunRow, candidate: RunRow): void {
  if (baseline.model_sha256 && candidate.model_sha256 && baseline.model_sha256 !== candidate.model_sha256)
    throw new AppError(
      ErrorCode.InvalidInput,
      `run ${candidate.id.slice(0, 8)} served another model file (sha256 ${candidate.model_sha256.slice(0, 12)}) than the baseline (${baseline.model_sha256.slice(0, 12)}): nothing to compare`,
    );
  if (baseline.workload_revision !== candidate.workload_revision)
    throw new AppError(
      ErrorCode.InvalidInput,
      `run ${candidate.id.slice(0, 8)} ran workload revision ${candidate.workload_revision?.slice(0, 12)}, the baseline ${baseline.workload_revision?.slice(0, 12)}: the workload changed, so its figures are not comparable`,
    );
}

/** For a run that came in through `inferlab import`, " from <folder>" (or "" where the folder is not recorded); null for a run measured here. */
function importedFrom(run: RunRow): string | null {
  const imported = parseJson<{ imported?: { from?: string } }>(run.manifest_json)?.imported;
  if (!imported) return null;
  return imported.from ? ` from ${imported.from}` : '';
}

/** The run spec that measures the baseline's configuration again, with `settings` over its profile. */
export function rerunSpec(baseline: RunRow, settings: readonly string[]): StartRunSpec {
  const manifest = parseJson<Manifest>(baseline.manifest_json);
  const refuse = (why: string): never => {
    throw new AppError(
      ErrorCode.InvalidInput,
      `the baseline run ${baseline.id.slice(0, 8)} cannot be measured again: ${why}; pass --run ID with a stored candidate run`,
    );
  };
  // An imported run's paths were written on another machine, by whoever made the export: opening
  // them here would let an export choose which of this machine's files are read as a model or workload.
  const imported = importedFrom(baseline);
  if (imported !== null)
    refuse(
      `it was imported${imported}, and the model, workload and draft paths it records belong to the machine it was measured on, so they are not opened here`,
    );
  if (manifest?.target?.kind !== 'model' || !manifest.target.model || !manifest.target.profile) refuse('it did not start its own server');
  if (manifest!.trace) refuse('it replayed a trace');
  if (!manifest!.workload?.source) refuse('its workload file is not recorded');
  const load = manifest!.load ?? {};
  const profile = Object.entries(manifest!.target!.profile!)
    .filter(([field]) => field !== 'name')
    .map(([field, value]) =>
      field === 'extraFlags' ? `extraFlags=${(value as string[]).join(' ')}` : `${field}=${value === null ? 'none' : String(value)}`,
    );
  return {
    workload: manifest!.workload!.source!,
    model: manifest!.target!.model!,
    endpoint: null,
    profileName: 'default',
    settings: [...profile, ...settings],
    concurrency: load.mode === 'closed' ? (load.concurrency ?? 1) : null,
    rate: load.mode === 'open' ? (load.rate ?? null) : null,
    burstiness: load.mode === 'open' ? (load.burstiness ?? null) : null,
    maxOutstanding: load.mode === 'open' ? (load.maxOutstanding ?? null) : null,
    rampUpS: load.rampUp ? load.rampUp.ms / 1000 : null,
    rampShape: load.rampUp?.shape ?? null,
    requests: manifest!.stop?.requests ?? null,
    durationS: manifest!.stop?.durationMs ? manifest!.stop.durationMs / 1000 : null,
    warmup: manifest!.warmup ?? 0,
    slo: manifest!.slo ?? null,
    private: false,
  };
}

/** The llama-server the baseline ran on, which an interleaved check must run again. */
function recordedServer(baseline: RunRow): string {
  // An imported run's engine path was written on another machine, by whoever made the export:
  // running whatever file it names here would let an export choose a program to execute.
  const imported = importedFrom(baseline);
  if (imported !== null)
    throw new AppError(
      ErrorCode.InvalidInput,
      `the baseline run ${baseline.id.slice(0, 8)} was imported${imported}: its llama-server path belongs to the machine it was measured on and is not run here; measure a baseline on this machine, or judge a candidate measured here with --run ID`,
    );
  const serverPath = parseJson<{ serverPath?: string }>(baseline.engine_json)?.serverPath ?? null;
  if (!serverPath)
    throw new AppError(
      ErrorCode.InvalidInput,
      `the baseline run ${baseline.id.slice(0, 8)} does not record its llama-server, so it cannot be measured again beside the candidate; drop --interleave`,
    );
  if (!isExecutable(serverPath))
    throw new AppError(
      ErrorCode.InvalidInput,
      `the baseline's llama-server ${serverPath} is gone, so it cannot be measured again beside the candidate; drop --interleave (drift since ${baseline.started_at} then counts as change)`,
    );
  return serverPath;
}

/** One window's value of a metric: a statistic over its successful measured requests, or its own output rate. */
function windowValue(store: RunStore, run: RunRow, metric: CheckedMetric): number | null {
  if (metric.metric === 'output_tokens_per_s') return parseJson<RunSummary>(run.summary_json)?.throughput?.output_tokens_per_s ?? null;
  const key = metric.metric;
  const values = store.sortedLatencyColumns(run.id)[key];
  if (values.length === 0) return null;
  if (metric.statistic === 'mean') return values.reduce((sum, value) => sum + value, 0) / values.length;
  if (metric.statistic !== 'p50' && values.length < PERCENTILE_MIN_N[metric.statistic]) return null;
  return percentile(values, Number(metric.statistic.slice(1)) / 100);
}

type CheckOptions = {
  store: RunStore;
  experiments: ExperimentStore;
  query: CheckQuery;
  /**
   * Measures a run spec and returns its summary (the run is stored). `baselineServer` is the
   * baseline's recorded llama-server, given for the baseline side of an interleaved check, which
   * must run on it; null for the candidate, which runs on whatever engine the caller chose.
   */
  run: (spec: StartRunSpec, side: CheckSideName, baselineServer: string | null) => Promise<RunSummary>;
  /** The sha256 of a model reference's file now, to refuse a rerun on a changed file before it starts. */
  modelSha256: (ref: string) => Promise<string | null>;
  onStatus?: (line: string) => void;
};

/**
 * The regression gate: the baseline's windows against the candidate's (stored runs, or the
 * baseline's configuration measured again `repeats` times with `settings` over its profile).
 * Refuses, before judging anything, a candidate on another model file or workload revision.
 */
export async function runRegressionCheck(options: CheckOptions): Promise<CheckResult> {
  const { store, query } = options;
  const stored = completedBaseline(store, options.experiments, query);
  const reference = stored[0]!;
  if (query.interleave && query.candidateRuns && query.candidateRuns.length > 0)
    throw new AppError(
      ErrorCode.Usage,
      '--interleave measures the baseline again beside a measured candidate; stored --run windows cannot be interleaved',
    );
  const measured =
    query.candidateRuns && query.candidateRuns.length > 0
      ? { candidate: storedCandidate(store, query.candidateRuns, reference), freshBaseline: null }
      : await measureWindows(options, reference);
  const baseline = measured.freshBaseline ?? stored;
  const candidate = measured.candidate;
  const alpha = CHECK_ALPHA / query.metrics.length;
  const metrics = query.metrics.map((metric) => metricResult(store, baseline, candidate, metric, query.margin, alpha));
  const result = metrics.some((entry) => entry.verdict === 'regression')
    ? 'regression'
    : metrics.some((entry) => entry.verdict === 'insufficient data')
      ? 'insufficient data'
      : 'pass';
  return {
    result,
    margin: query.margin,
    alpha: CHECK_ALPHA,
    rule: CHECK_RULE,
    interleaved: measured.freshBaseline !== null,
    baseline: side(baseline),
    stored_baseline: measured.freshBaseline ? side(stored) : null,
    candidate: side(candidate),
    metrics,
  };
}

/** The baseline's stored runs: there, completed, and comparable with each other. */
function completedBaseline(store: RunStore, experiments: ExperimentStore, query: CheckQuery): RunRow[] {
  const baseline = baselineRuns(store, experiments, query);
  if (baseline.length === 0) throw new AppError(ErrorCode.NotFound, `--baseline ${query.baseline} has no stored runs`);
  const incomplete = baseline.find((run) => run.status !== 'completed');
  if (incomplete)
    throw new AppError(ErrorCode.InvalidInput, `baseline run ${incomplete.id.slice(0, 8)} is ${incomplete.status}, not completed`);
  for (const run of baseline.slice(1)) assertComparable(baseline[0]!, run);
  return baseline;
}

/** The candidate as stored runs named by --run: each completed and comparable with the baseline. */
function storedCandidate(store: RunStore, ids: readonly string[], reference: RunRow): RunRow[] {
  return ids.map((id) => {
    const run = store.findRun(id);
    if (!run) throw new AppError(ErrorCode.NotFound, `--run ${id}: no such run`);
    if (run.status !== 'completed') throw new AppError(ErrorCode.InvalidInput, `--run ${id} is ${run.status}, not completed`);
    assertComparable(reference, run);
    return run;
  });
}

/**
 * The candidate measured `repeats` times, and with --interleave the baseline again beside it
 * (ABBA), on the same model file; a window other processes competed with is measured again.
 */
async function measureWindows(options: CheckOptions, reference: RunRow): Promise<{ candidate: RunRow[]; freshBaseline: RunRow[] | null }> {
  const { store, query } = options;
  const baselineServer = query.interleave ? recordedServer(reference) : null;
  const spec = rerunSpec(reference, query.settings);
  const sha256 = await options.modelSha256(spec.model!);
  if (reference.model_sha256 && sha256 && sha256 !== reference.model_sha256)
    throw new AppError(
      ErrorCode.InvalidInput,
      `${spec.model}: the file changed since the baseline (sha256 ${sha256.slice(0, 12)}, baseline ${reference.model_sha256.slice(0, 12)}); a regression check needs the same model file`,
    );
  const measure = async (side: CheckSideName, window: number): Promise<RunRow> => {
    for (let attempt = 0; ; attempt++) {
      options.onStatus?.(`${side} window ${window}/${query.repeats}`);
      const summary = await options.run(
        side === 'baseline' ? rerunSpec(reference, []) : spec,
        side,
        side === 'baseline' ? baselineServer : null,
      );
      const run = store.findRun(summary.run_id)!;
      // Its workload revision is known once the workload is resolved: a changed file stops the check here.
      assertComparable(reference, run);
      if (run.status !== 'completed')
        throw new AppError(ErrorCode.RequestFailed, `${side} run ${run.id.slice(0, 8)} ${run.status}: ${run.status_reason ?? ''}`);
      // A window other processes competed with measures them too: a gate must not fail a build on it.
      const contention = summary.telemetry?.contention;
      if (!contention?.contaminated || attempt === CONTAMINATED_RETRIES) return run;
      options.onStatus?.(`${side} window ${window}: ${contention.reason}; measured again`);
    }
  };
  const candidate: RunRow[] = [];
  const fresh: RunRow[] = [];
  for (let window = 1; window <= query.repeats; window++) {
    if (!query.interleave) {
      candidate.push(await measure('candidate', window));
      continue;
    }
    // ABBA: a trend within the check falls on both sides equally instead of on whichever ran later.
    const order: CheckSideName[] = window % 2 === 1 ? ['baseline', 'candidate'] : ['candidate', 'baseline'];
    for (const side of order) (side === 'baseline' ? fresh : candidate).push(await measure(side, window));
  }
  return { candidate, freshBaseline: query.interleave ? fresh : null };
}

/** One metric's verdict: each side's window values, their geometric means, and the decision at this metric's share of alpha. */
function metricResult(
  store: RunStore,
  baseline: RunRow[],
  candidate: RunRow[],
  metric: CheckedMetric,
  margin: number,
  alpha: number,
): CheckMetricResult {
  const values = (runs: RunRow[]) => runs.map((run) => windowValue(store, run, metric));
  const [a, b] = [values(baseline), values(candidate)];
  const present = (list: (number | null)[]) => list.filter((value): value is number => value !== null);
  const decision = regressionDecision({
    baseline: present(a),
    candidate: present(b),
    margin,
    alpha,
    higherIsBetter: METRIC_TABLE[metric.metric].higherIsBetter,
  });
  const geometric = (list: number[]) =>
    list.length === 0 ? null : Math.exp(list.reduce((sum, value) => sum + Math.log(value), 0) / list.length);
  const missing = [...a, ...b].some((value) => value === null);
  return {
    metric: metric.metric === 'output_tokens_per_s' ? metric.metric : `${metric.metric} ${metric.statistic}`,
    baseline_value: geometric(present(a)),
    candidate_value: geometric(present(b)),
    baseline_windows: present(a),
    candidate_windows: present(b),
    ...decision,
    note:
      decision.note ??
      (missing
        ? `some windows have no value (${metric.statistic} needs ${metric.statistic === 'p50' || metric.statistic === 'mean' ? 1 : PERCENTILE_MIN_N[metric.statistic as 'p90' | 'p95' | 'p99']} successful requests per run)`
        : null),
  };
}
