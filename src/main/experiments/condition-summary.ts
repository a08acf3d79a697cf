import type {
  ConditionEfficiency,
  ConditionEmbeddings,
  ConditionResult,
  VerdictRow,
  WindowDelivery,
} from '../../shared/contract/experiments';
import type { RunSummary } from '../../shared/contract/runs';
import { studentTQuantile } from '../metrics/student-t';
import { measuredWindowMs, summarizeRun } from '../metrics/run-summary';
import { decideFamily } from '../metrics/sequential-verdicts';
import { decideVerdicts, DEFAULT_VERDICT_SETTINGS, type VerdictQuestion, type VerdictSettings } from '../metrics/window-verdicts';
import type { MeasuredRequest } from '../../shared/contract/measurement';
import type { RunStore } from '../store/run-store';
import { parsedTimings, toMeasuredRequest, type RequestRow } from '../store/run-rows';
import { isPerRequest, judgedStatistics, type DistributionJudgedIn, type RateJudgedIn } from '../../shared/metric-table';
import { everyOneRanEmbeddings } from '../../shared/metric-columns';

/** Mean over windows with a 95 % t interval; windows are the unit of replication. */
export function meanOverWindows(values: (number | null)[]): { mean: number | null; ci: [number, number] | null; windows: number } {
  const present = values.filter((value): value is number => value !== null && Number.isFinite(value));
  if (present.length === 0) return { mean: null, ci: null, windows: 0 };
  const mean = present.reduce((sum, value) => sum + value, 0) / present.length;
  if (present.length < 2) return { mean, ci: null, windows: present.length };
  const sd = Math.sqrt(present.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (present.length - 1));
  const half = studentTQuantile(0.975, present.length - 1) * (sd / Math.sqrt(present.length));
  return { mean, ci: [mean - half, mean + half], windows: present.length };
}

/** Why a run's measurement is not to be trusted, from what competed with it (null when nothing did). */
function contentionOf(summary: RunSummary | null): string | null {
  const contention = (summary?.telemetry as { contention?: { contaminated?: boolean; reason?: string | null } } | null | undefined)
    ?.contention;
  return contention?.contaminated ? (contention.reason ?? 'other processes competed for the machine') : null;
}

/** The figures of some measured requests taken as one run: only their distributions, rates and counts are read. */
const summaryOfRows = (runId: string, rows: MeasuredRequest[]) =>
  summarizeRun({
    runId,
    status: 'completed',
    statusReason: null,
    workload: { name: null, revision: null },
    rows,
    load: { mode: 'closed' },
    slo: null,
  });

/** The most prompt tokens the server said it took from its cache for one successful measured request; null when it never said. */
function largestCacheN(rows: readonly RequestRow[]): number | null {
  let cacheN: number | null = null;
  for (const row of rows) {
    if (row.warmup !== 0 || row.error_class !== null) continue;
    const reported = parsedTimings(row)?.cache_n;
    if (typeof reported === 'number') cacheN = Math.max(cacheN ?? 0, reported);
  }
  return cacheN;
}

/**
 * A condition's measured requests over its windows (each window one run, on its own clock),
 * with the cache evidence the server gave. Latency distributions pool the windows' requests;
 * throughput is each window's own (its requests over its own measured span), averaged over
 * windows — chaining windows end to end would count the gaps between them as idle time.
 */
export function summarizeCondition(
  store: RunStore,
  name: string,
  runIds: string[],
): { result: ConditionResult; rows: RequestRow[]; windows: RequestRow[][] } {
  const rows: RequestRow[] = [];
  const windows: RequestRow[][] = [];
  const perWindow: { requests: number | null; outputTokens: number | null }[] = [];
  const summaries: (RunSummary | null)[] = [];
  const contended: string[] = [];
  const delivery: WindowDelivery[] = [];
  const measuredAll: MeasuredRequest[] = [];
  let metricsCached: number | null = null;
  for (const runId of runIds) {
    // With text: agreement and the KLD text need the outputs and prompts.
    const runRows = store.requests(runId);
    windows.push(runRows);
    rows.push(...runRows);
    const stored = store.getRun(runId);
    const summary = stored?.summary_json ? (JSON.parse(stored.summary_json) as RunSummary) : null;
    summaries.push(summary);
    const cached = summary?.telemetry?.server_metrics?.cached_prompt_tokens;
    if (typeof cached === 'number') metricsCached = (metricsCached ?? 0) + cached;
    const contention = contentionOf(summary);
    if (contention) contended.push(`run ${runId.slice(0, 8)}: ${contention}`);
    const measuredRows = runRows.map(toMeasuredRequest);
    measuredAll.push(...measuredRows);
    const own = summaryOfRows(runId, measuredRows);
    perWindow.push({ requests: own.throughput.requests_per_s, outputTokens: own.throughput.output_tokens_per_s });
    // One entry per window, so the warning's window numbers stay the windows' own.
    delivery.push({ judged_requests: own.delivery?.judged_requests ?? 0, bunched_requests: own.delivery?.bunched_requests ?? 0 });
  }
  const summary = summaryOfRows(name, measuredAll);
  const embeddings = conditionEmbeddings(summaries);
  const cacheN = largestCacheN(rows);
  const requestRate = meanOverWindows(perWindow.map((window) => window.requests));
  const tokenRate = meanOverWindows(perWindow.map((window) => window.outputTokens));
  return {
    rows,
    windows,
    result: {
      name,
      run_ids: runIds,
      metrics: summary.metrics,
      throughput: {
        requests_per_s: requestRate.mean,
        output_tokens_per_s: tokenRate.mean,
        requests_per_s_ci: requestRate.ci,
        output_tokens_per_s_ci: tokenRate.ci,
        windows: tokenRate.windows,
      },
      accepted_rate: summary.accepted_rate,
      requests: { attempted: summary.requests.attempted, completed: summary.requests.completed, failed: summary.requests.failed },
      evidence: {
        cached_prompt_tokens: summary.cache.cached_prompt_tokens,
        prompt_tokens: summary.cache.prompt_tokens,
        timings_cache_n_max: cacheN,
        metrics_cached_prompt_tokens: metricsCached,
      },
      contaminated: contended.length > 0,
      contamination_reason:
        contended.length > 0
          ? `other processes competed during ${contended.length} of ${runIds.length} window(s): ${contended.join('; ')}`
          : null,
      efficiency: conditionEfficiency(summaries),
      ...(embeddings ? { embeddings } : {}),
      delivery,
      offload_warning: summaries.find((window) => window?.gpu_offload?.warning)?.gpu_offload?.warning ?? null,
    },
  };
}

/** An embeddings condition's inputs per second, each window its own run's; null where no window ran embeddings. */
function conditionEmbeddings(summaries: readonly (RunSummary | null)[]): ConditionEmbeddings | null {
  const windows = summaries.map((summary) => summary?.embeddings ?? null);
  if (!windows.some((window) => window !== null)) return null;
  const rates = meanOverWindows(windows.map((window) => window?.inputs_per_s ?? null));
  const inputs = windows.reduce((sum, window) => sum + (window?.inputs ?? 0), 0);
  const requests = windows.reduce((sum, window) => sum + (window?.requests ?? 0), 0);
  return {
    inputs_per_s: rates.mean,
    inputs_per_s_ci: rates.ci,
    window_inputs_per_s: windows.flatMap((window) => (window?.inputs_per_s == null ? [] : [window.inputs_per_s])),
    inputs_per_request_mean: requests === 0 ? null : inputs / requests,
  };
}

/** Energy per output token and decode bandwidth over a condition's windows, each window one value. */
export function conditionEfficiency(summaries: readonly (RunSummary | null)[]): ConditionEfficiency {
  const energies = summaries.map((summary) => summary?.telemetry?.energy ?? null);
  const bandwidths = summaries.map((summary) => summary?.decode_bandwidth ?? null);
  const joules = meanOverWindows(energies.map((energy) => energy?.joules_per_output_token ?? null));
  const gbPerS = meanOverWindows(bandwidths.map((bandwidth) => bandwidth?.effective_gb_per_s ?? null));
  const utilization = meanOverWindows(bandwidths.map((bandwidth) => bandwidth?.utilization ?? null));
  const firstReason = (reasons: (string | null | undefined)[], fallback: string) =>
    reasons.find((reason): reason is string => typeof reason === 'string' && reason.length > 0) ?? fallback;
  const peak = bandwidths.find((bandwidth) => bandwidth?.peak)?.peak ?? null;
  return {
    joules_per_output_token: joules.mean,
    joules_per_output_token_ci: joules.ci,
    energy_windows: joules.windows,
    energy_reason:
      joules.windows > 0
        ? null
        : firstReason(
            energies.map((energy) => energy?.reason),
            'no window measured energy',
          ),
    decode_gb_per_s: gbPerS.mean,
    bandwidth_utilization: utilization.mean,
    bandwidth_peak: peak ? `${peak.label} (${peak.kind})` : null,
    bandwidth_windows: gbPerS.windows,
    bandwidth_cache_note: bandwidths.find((bandwidth) => bandwidth?.cache_note)?.cache_note ?? null,
    bandwidth_reason:
      gbPerS.windows > 0
        ? null
        : firstReason(
            bandwidths.map((bandwidth) => bandwidth?.reason),
            'no window measured decode bandwidth',
          ),
  };
}

/** Successful measured requests over all of a side's windows: what its rates rest on. */
function measuredCount(windows: RequestRow[][]): number {
  return windows.reduce((sum, rows) => sum + rows.filter((row) => row.warmup === 0 && row.error_class === null).length, 0);
}

/**
 * What a window's rate counts, over its successful measured requests, for each rate the metric
 * table gives a verdict: keyed by the table, so a rate given `verdict` without its count here
 * does not compile.
 */
const WINDOW_RATE_COUNTS: { readonly [M in RateJudgedIn<'verdict'>]: (successful: MeasuredRequest[]) => number } = {
  output_tokens_per_s: (successful) => successful.reduce((sum, row) => sum + (row.output_tokens ?? 0), 0),
};

/** Each window's own rate (per second) over its own measured span, as a one-value window. */
function windowRates(windows: RequestRow[][], metric: RateJudgedIn<'verdict'>): number[][] {
  return windows.flatMap((rows) => {
    const measured = rows.filter((row) => row.warmup === 0).map(toMeasuredRequest);
    const span = measuredWindowMs(measured);
    const count = WINDOW_RATE_COUNTS[metric](measured.filter((row) => row.error_class === null));
    return span && span > 0 ? [[(count / span) * 1000]] : [];
  });
}

/**
 * The verdicts experiments give for each condition against the baseline: `verdict` in the metric
 * table, each metric with each statistic it is judged on (the rates only where a kind asks).
 */
export const VERDICT_METRICS = judgedStatistics('verdict');

/** Those of an experiment on an embeddings workload, which has no first token and no decode: `embeddingVerdict` in the table. */
export const EMBEDDING_VERDICT_METRICS = judgedStatistics('embeddingVerdict');

type JudgedDistribution = DistributionJudgedIn<'verdict'> | DistributionJudgedIn<'embeddingVerdict'>;

export interface VerdictOptions {
  /** Also judge the rates the table gives verdicts (output tokens per second), each window's own rate as one value. */
  throughput?: boolean;
  /**
   * Comparisons beyond the baseline against every other condition, each `[A, B]` by name (an
   * adapter on a server of its own against the same adapter swapped in per request). They join the
   * same family, so its error stays the family's however many there are.
   */
  pairs?: readonly (readonly [string, string])[];
}

/** One condition as its verdicts read it: its windows' requests, and for embeddings each window's inputs per second. */
export interface JudgedCondition {
  name: string;
  windows: RequestRow[][];
  contaminated?: string | null;
  /** Where the condition ran embeddings, each window's inputs per second (as in ConditionResult.embeddings). */
  embeddings?: { window_inputs_per_s: readonly number[] };
}

/** A side's windows of one rate, each one value: its own window's rate. */
function rateWindows(condition: JudgedCondition, metric: RateJudgedIn<'verdict'> | RateJudgedIn<'embeddingVerdict'>): number[][] {
  if (metric === 'embedding_inputs_per_s') return (condition.embeddings?.window_inputs_per_s ?? []).map((rate) => [rate]);
  return windowRates(condition.windows, metric);
}

/**
 * Baseline (first) against every other condition, then any further pairs asked for, on each verdict
 * metric (TTFT and TPOT at p50 and p95), decided together (window-verdicts.ts: t tests over windows,
 * Holm-corrected across all of them).
 * A condition marked contaminated gets no verdict: its windows did not measure what its
 * name claims.
 */
export function conditionVerdicts(
  conditions: JudgedCondition[],
  settings: VerdictSettings = DEFAULT_VERDICT_SETTINGS,
  options: VerdictOptions = {},
): VerdictRow[] {
  const [baseline, ...others] = conditions;
  if (!baseline) return [];
  const byName = new Map(conditions.map((condition) => [condition.name, condition]));
  const pairs = [
    ...others.map((other) => [baseline, other] as const),
    ...(options.pairs ?? []).map(([a, b]) => [byName.get(a)!, byName.get(b)!] as const),
  ];
  // Embeddings have no tokens to time: every side ran them, or the verdicts are the answers' own.
  const embeddings = everyOneRanEmbeddings(conditions);
  const judged = embeddings ? EMBEDDING_VERDICT_METRICS : VERDICT_METRICS;
  // Typed by the table: a per-request metric given `verdict` must be a column of the request rows.
  const values = (runs: RequestRow[][], key: JudgedDistribution) =>
    runs
      .map((rows) => rows.filter((row) => row.warmup === 0 && row.error_class === null && row[key] !== null).map((row) => row[key]!))
      .filter((window) => window.length > 0);
  const questions: VerdictQuestion[] = [];
  const withheld = new Map<number, string>();
  for (const [baseline, other] of pairs) {
    const reason = [baseline, other]
      .filter((side) => side.contaminated)
      // The reason stands once, in the condition's own row; every verdict it blocks points there.
      .map((side) => `${side.name} is contaminated (see its condition row)`)
      .join('; ');
    for (const { metric, statistic } of judged) {
      if (!isPerRequest(metric) && !options.throughput && !embeddings) continue;
      if (reason) withheld.set(questions.length, `no verdict: ${reason}`);
      const sides = isPerRequest(metric)
        ? { aWindows: values(baseline.windows, metric), bWindows: values(other.windows, metric) }
        : {
            aWindows: rateWindows(baseline, metric),
            bWindows: rateWindows(other, metric),
            requests: [measuredCount(baseline.windows), measuredCount(other.windows)] as [number, number],
          };
      questions.push({ metric: `${metric} ${statistic}`, a: baseline.name, b: other.name, statistic, ...sides });
    }
  }
  // Contaminated comparisons stay out of the family: a withheld verdict spends no error budget.
  const decided = decideFamily(
    questions.filter((_, index) => !withheld.has(index)),
    settings,
  );
  let next = 0;
  return questions.map((question, index) => {
    const reason = withheld.get(index);
    if (reason === undefined) return decided[next++]!;
    const [row] = decideVerdicts([question], { ...settings, sequential: undefined, minWindowsPerSide: Number.MAX_SAFE_INTEGER });
    return { ...row!, verdict: 'insufficient data', note: reason };
  });
}

/** A summarized condition as its verdicts read it. */
export const judgedCondition = (result: ConditionResult, windows: RequestRow[][]): JudgedCondition => ({
  name: result.name,
  windows,
  contaminated: result.contaminated ? result.contamination_reason : null,
  ...(result.embeddings ? { embeddings: { window_inputs_per_s: result.embeddings.window_inputs_per_s } } : {}),
});

/** Verdicts between summarized conditions (the first the baseline), a contaminated one withheld with its reason. */
export function summaryVerdicts(
  summaries: readonly { result: ConditionResult; windows: RequestRow[][] }[],
  settings: VerdictSettings = DEFAULT_VERDICT_SETTINGS,
  options: VerdictOptions = {},
): VerdictRow[] {
  return conditionVerdicts(
    summaries.map(({ result, windows }) => judgedCondition(result, windows)),
    settings,
    options,
  );
}

/** Accepted of judged: requests with checks, and failed requests, which accepted nothing. */
export function acceptanceCounts(rows: readonly RequestRow[]): { accepted: number; judged: number } {
  const measured = rows.filter((row) => row.warmup === 0);
  const judged = measured.filter((row) => row.accepted !== null || row.error_class !== null);
  return { accepted: judged.filter((row) => row.error_class === null && row.accepted === 1).length, judged: judged.length };
}
