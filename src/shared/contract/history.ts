import { judgedStatistics, METRIC_TABLE, metricsJudgedIn, namesInWords, type MetricJudgedIn } from '../metric-table';
/**
 * A metric's history across engine builds: the runs of one comparable configuration (same
 * model file, workload revision, server profile and load), grouped by the llama.cpp build
 * that served them, so a slower build or driver shows as a step between groups.
 */

/** The metrics a history can show: `history` in the metric table. */
export const HISTORY_METRICS: readonly HistoryMetric[] = metricsJudgedIn('history');
export type HistoryMetric = MetricJudgedIn<'history'>;

/** Percentiles apply to the per-request latencies; throughput is one value per run and takes none. */
export const LATENCY_STATISTICS = ['p50', 'p95'] as const;
export type LatencyStatistic = (typeof LATENCY_STATISTICS)[number];

/** Every metric spec a history accepts, as `metric:statistic` (a rate alone), from the statistics the table gives each. */
export const HISTORY_METRIC_SPECS: readonly string[] = judgedStatistics('history').map(({ metric, statistic }) =>
  statistic === 'rate' ? metric : `${metric}:${statistic}`,
);

export interface MetricSpec {
  metric: HistoryMetric;
  /** Null for throughput, which each run reports once. */
  statistic: LatencyStatistic | null;
}

/** The spec `metric:statistic` names, or null when it names none a history can show. */
export function readMetricSpec(text: string): MetricSpec | null {
  const [metric, statistic, ...rest] = text.trim().split(':');
  if (rest.length > 0 || !(HISTORY_METRICS as readonly string[]).includes(metric ?? '')) return null;
  const statistics: readonly string[] = METRIC_TABLE[metric as HistoryMetric].judged.history;
  // A rate is one figure per run: it takes no statistic.
  if (statistics.includes('rate')) return statistic === undefined ? ({ metric, statistic: null } as MetricSpec) : null;
  if (!statistics.includes(statistic ?? '')) return null;
  return { metric: metric as HistoryMetric, statistic: statistic as LatencyStatistic };
}

export function metricSpecProblem(text: string): string {
  const rates = HISTORY_METRICS.filter((metric) => !METRIC_TABLE[metric].perRequest);
  return `metric "${text}" is not one a history can show; allowed: ${HISTORY_METRIC_SPECS.join(', ')} (metrics ${HISTORY_METRICS.join(', ')}; statistics ${LATENCY_STATISTICS.join(', ')}, none for ${namesInWords(rates)})`;
}

export interface HistoryQuery {
  /** `tpot_ms:p50`, `ttft_ms:p95`, `output_tokens_per_s`, ... (HISTORY_METRIC_SPECS). */
  metric: string;
  /** A model file's SHA-256, or the model reference or path the runs were started with. */
  model?: string | null;
  /** A workload revision, or a workload name. */
  workload?: string | null;
  /** One configuration key, as a history lists them. */
  key?: string | null;
}

export interface HistoryRun {
  runId: string;
  startedAt: string;
  /** The run's own statistic over its successful measured requests; null with `note` when it has none. */
  value: number | null;
  /** Successful measured requests that carry the metric (null for throughput, read from the run summary). */
  requests: number | null;
  note: string | null;
}

export interface HistoryBuild {
  /** `commit|backend`, or `unknown` for runs whose engine was not recorded. */
  build: string;
  label: string;
  commit: string | null;
  backend: string | null;
  firstStartedAt: string;
  runs: HistoryRun[];
  /** Mean over the runs that have a value. */
  mean: number | null;
  /** 95 % t interval of that mean; null below two runs, with the reason in `intervalNote`. */
  interval: [number, number] | null;
  intervalNote: string | null;
  /** Change of the mean against the first build's, in percent; null for the first build and when either mean is missing. */
  changePercent: number | null;
}

export interface HistoryConfiguration {
  key: string;
  model: { sha256: string | null; ref: string | null };
  workload: { name: string | null; revision: string | null };
  /** The load in words: `closed, concurrency 4` or `open, 2 req/s`. */
  load: string;
  /** The server profile name the first run used; profiles are compared by content, not name. */
  profileName: string | null;
  builds: HistoryBuild[];
}

export interface MetricHistory {
  metric: HistoryMetric;
  statistic: LatencyStatistic | null;
  unit: string;
  /** Whether a larger value is better (throughput) or worse (latencies). */
  higherIsBetter: boolean;
  /** Each comparable configuration separately, the one with the most runs first. */
  configurations: HistoryConfiguration[];
  notes: string[];
}
