/**
 * The one place run metrics are declared. Each one's label, unit, which way is better, whether it
 * is measured per request (so it has percentiles) or is one rate per run or window (one figure),
 * where a run summary holds it, and which of its statistics each place shows. Verdicts, histories,
 * the regression gate, the run summaries of the terminal and the app, the runs lists, Compare, the
 * experiment report and runs.parquet read these facts here rather than from their own lists or from
 * the metric's name; `metric-columns.ts` turns them into each place's columns.
 */

/**
 * What a place can show of a metric. A per-request metric is summarized as a distribution over
 * the run's successful measured requests (`n` is its count); a rate is one figure per run
 * (for an experiment condition, the mean over its windows), named `rate` here.
 */
export type Statistic = 'n' | 'mean' | 'std' | 'p50' | 'p90' | 'p95' | 'p99' | 'min' | 'max' | 'rate';

/** A distribution's statistics in the order every table shows them (`Distribution` in contract/runs.ts). */
export const DISTRIBUTION_STATISTICS = ['n', 'mean', 'std', 'p50', 'p90', 'p95', 'p99', 'min', 'max'] as const;

/**
 * The part of a run summary that holds a metric: distributions in `metrics`, `schedule_latency`
 * (open loop only) and `reasoning` (only when reasoning streamed); rates in `throughput` and
 * `goodput`. An experiment condition holds `metrics` and `throughput` the same way.
 */
export type SummaryPart = 'metrics' | 'schedule_latency' | 'reasoning' | 'throughput' | 'goodput';

/**
 * Where a metric can show, each with the statistics it shows there, in order:
 * - `cli`: the terminal's run summary (`inferlab run`, `runs show`): a distribution is a row of
 *   its table, a rate a figure on its throughput line;
 * - `ui`: the app's run summary (Runs, Run), laid out the same way;
 * - `runsList`: the runs lists, `inferlab runs list` and the Runs view, a column per statistic;
 * - `compare`: `inferlab compare` and the Compare view, a row per statistic;
 * - `conditions`: an experiment's conditions table in the terminal and the app, every kind's own
 *   table (sweep, speculative) included, a column per statistic;
 * - `report`: the conditions table of the experiment report, a column per statistic;
 * - `reportChart`: the experiment report's bar charts, one per statistic;
 * - `parquet`: runs.parquet, a column per statistic (a file format: see docs/METRICS.md).
 * A place a metric does not name does not show it.
 */
export type Place = 'cli' | 'ui' | 'runsList' | 'compare' | 'conditions' | 'report' | 'reportChart' | 'parquet';
export type Shows = { readonly [P in Place]?: readonly Statistic[] };

export interface MetricDefinition {
  /** What headers call it: "TTFT p50". A rate's label names its unit ("output tok/s"), a distribution's does not. */
  label: string;
  unit: 'ms' | 'tok/s' | 'req/s';
  higherIsBetter: boolean;
  /** Measured per request (a distribution with percentiles), or one rate per run or window. */
  perRequest: boolean;
  /** Where a run summary holds it: `summary[part][field]`, the field named as the metric unless `field` says otherwise. */
  summary: { part: SummaryPart; field?: string; statistics: readonly Statistic[] };
  /** The decimals a rate is printed with; a latency's follow its size in each face. */
  digits?: number;
  /** A word the run summaries print after the metric's name where the name alone does not say what it times. */
  gloss?: string;
  shows: Shows;
}

/** The run summary's distribution table, in the terminal and in the app alike. */
const SUMMARY_TABLE = ['n', 'mean', 'p50', 'p90', 'p95', 'p99', 'max'] as const;

// Generic over `shows` so that each metric's places stay in its type: the runs list and Compare
// are checked at compile time against the figures they have behind them.
function latency<const S extends Shows>(label: string, part: SummaryPart, shows: S, gloss?: string) {
  return {
    label,
    unit: 'ms',
    higherIsBetter: false,
    perRequest: true,
    summary: { part, statistics: DISTRIBUTION_STATISTICS },
    ...(gloss === undefined ? {} : { gloss }),
    shows,
  } as const;
}

function rate<const S extends Shows>(
  label: string,
  unit: 'tok/s' | 'req/s',
  digits: number,
  summary: { part: SummaryPart; field?: string },
  shows: S,
) {
  return { label, unit, higherIsBetter: true, perRequest: false, summary: { ...summary, statistics: ['rate'] }, digits, shows } as const;
}

// The order here is the order of rows and columns in every place.
export const METRIC_TABLE = {
  ttft_ms: latency('TTFT', 'metrics', {
    cli: SUMMARY_TABLE,
    ui: SUMMARY_TABLE,
    runsList: ['p50'],
    compare: ['p50', 'p95'],
    conditions: ['p50', 'p95'],
    report: ['p50', 'p95'],
    reportChart: ['p50'],
    parquet: ['p50', 'p95', 'p99'],
  }),
  tpot_ms: latency('TPOT', 'metrics', {
    cli: SUMMARY_TABLE,
    ui: SUMMARY_TABLE,
    compare: ['p50', 'p95'],
    conditions: ['p50'],
    report: ['p50'],
    reportChart: ['p50'],
    parquet: ['p50', 'p95'],
  }),
  itl_ms: latency('ITL', 'metrics', { cli: SUMMARY_TABLE, ui: SUMMARY_TABLE, parquet: ['p50', 'p99'] }),
  e2e_ms: latency('E2E', 'metrics', {
    cli: SUMMARY_TABLE,
    ui: SUMMARY_TABLE,
    compare: ['p50', 'p95'],
    report: ['p50'],
    parquet: ['p50', 'p95'],
  }),
  queue_ms: latency('queue', 'metrics', { cli: SUMMARY_TABLE, ui: SUMMARY_TABLE }),
  client_overhead_ms: latency('client overhead', 'metrics', { cli: SUMMARY_TABLE, ui: SUMMARY_TABLE }),
  ttft_from_schedule_ms: latency('TTFT from schedule', 'schedule_latency', { cli: SUMMARY_TABLE }),
  e2e_from_schedule_ms: latency('E2E from schedule', 'schedule_latency', { cli: SUMMARY_TABLE }),
  ttfr_ms: latency('TTFR', 'reasoning', { cli: SUMMARY_TABLE }, 'reasoning'),
  ttfa_ms: latency('TTFA', 'reasoning', { cli: SUMMARY_TABLE }, 'answer'),
  requests_per_s: rate('req/s', 'req/s', 2, { part: 'throughput' }, { cli: ['rate'], ui: ['rate'], parquet: ['rate'] }),
  output_tokens_per_s: rate(
    'output tok/s',
    'tok/s',
    1,
    { part: 'throughput' },
    {
      cli: ['rate'],
      ui: ['rate'],
      runsList: ['rate'],
      compare: ['rate'],
      conditions: ['rate'],
      report: ['rate'],
      reportChart: ['rate'],
      parquet: ['rate'],
    },
  ),
  total_tokens_per_s: rate('total tok/s', 'tok/s', 1, { part: 'throughput' }, { cli: ['rate'] }),
  goodput_requests_per_s: rate('goodput req/s', 'req/s', 2, { part: 'goodput', field: 'requests_per_s' }, { parquet: ['rate'] }),
} as const satisfies Record<string, MetricDefinition>;

export type TableMetric = keyof typeof METRIC_TABLE;

type Table = typeof METRIC_TABLE;

/** The metrics a place shows. */
export type MetricShownIn<P extends Place> = {
  [K in TableMetric]: Table[K]['shows'] extends { readonly [Q in P]: readonly Statistic[] } ? K : never;
}[TableMetric];

/** The per-request metrics among them. */
export type DistributionShownIn<P extends Place> = Extract<
  MetricShownIn<P>,
  { [K in TableMetric]: Table[K]['perRequest'] extends true ? K : never }[TableMetric]
>;

/** Every `metric statistic` a place shows ("ttft_ms p50", "output_tokens_per_s rate"). */
export type ColumnShownIn<P extends Place> = {
  [K in TableMetric]: Table[K]['shows'] extends { readonly [Q in P]: readonly (infer S extends Statistic)[] } ? `${K} ${S}` : never;
}[TableMetric];

/**
 * A metric as verdicts, histories and the gate write it, with or without its statistic
 * (`tpot_ms`, `ttft_ms p95`, `ttft_ms:p95`, `output_tokens_per_s mean`); null for a name the
 * table does not hold.
 */
export function metricDefinition(name: string): MetricDefinition | null {
  const metric = name.split(/[\s:]/)[0]!;
  return Object.hasOwn(METRIC_TABLE, metric) ? METRIC_TABLE[metric as TableMetric] : null;
}
