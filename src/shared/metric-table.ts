/**
 * The one place run metrics are declared. Each one's label, unit, which way is better, whether it
 * is measured per request (so it has percentiles) or is one rate per run or window (one figure),
 * where a run summary holds it, which of its statistics each place shows (`shows`), and what is
 * decided from it (`judged`): experiment verdicts, what a recommendation counts as speed, the
 * regression gate, build histories and SLOs. Every face, the experiment report and runs.parquet
 * read what they show here (`metric-columns.ts` turns it into each place's columns), and every
 * list of judged metrics is derived here (`metricsJudgedIn`, `judgedStatistics`, `metricsInPart`),
 * so a metric given a place reaches it and no other list of metric names is written anywhere
 * else (`test/unit/metric-lists.test.ts` fails on one). Where a judged place reads a figure the
 * run does not keep for every metric (a request column, a sorted latency column), the place's
 * type comes from here and the code that reads it does not compile for a metric without one.
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
 * (open loop only), `reasoning` (only when reasoning streamed), `tool_calls` (only when a
 * request offered tools) and `images` (per encode and per picture, not per request: runs that
 * show pictures to a managed server); rates in `throughput`,
 * `goodput`, and `embeddings` or `rerank` (those runs only). An experiment condition holds
 * `metrics` and `throughput` the same way.
 */
export type SummaryPart =
  'metrics' | 'schedule_latency' | 'reasoning' | 'tool_calls' | 'images' | 'throughput' | 'goodput' | 'embeddings' | 'rerank';

/** The parts only one kind of workload's runs hold: a place comparing runs of other kinds leaves their metrics out. */
export const KIND_OWN_PARTS: readonly SummaryPart[] = ['embeddings', 'rerank'];

/**
 * Where a metric can show, each with the statistics it shows there, in order:
 * - `cli`: the terminal's run summary (`inferlab run`, `runs show`): a distribution is a row of
 *   its table, a rate a figure on its throughput line;
 * - `ui`: the app's run summary (Runs, Run), laid out the same way;
 * - `runsList`: the runs lists, `inferlab runs list` and the Runs view, a column per statistic;
 * - `compare`: `inferlab compare` and the Compare view, a row per statistic, and a distribution's
 *   CDF chart;
 * - `perTurn`: the per-turn table of a run of conversations, terminal and app, a column per statistic;
 * - `conditions`: an experiment's conditions table in the terminal and the app, every kind's own
 *   table (sweep, speculative) included, a column per statistic;
 * - `embeddingConditions`: those three tables for an experiment on an embeddings workload, which
 *   has no first token, no decode and no output tokens (metric-columns.ts, `conditionColumns`);
 * - `report`: the conditions table of the experiment report, a column per statistic;
 * - `reportChart`: the experiment report's bar charts, one per statistic;
 * - `parquet`: runs.parquet, a column per statistic (a file format: see docs/METRICS.md).
 * A place a metric does not name does not show it.
 */
export type Place =
  'cli' | 'ui' | 'runsList' | 'compare' | 'perTurn' | 'conditions' | 'embeddingConditions' | 'report' | 'reportChart' | 'parquet';
export type Shows = { readonly [P in Place]?: readonly Statistic[] };

/**
 * Where a metric is judged: what is decided from it, not only shown. A place a metric does not
 * name never judges it, and each place takes only the statistics its code can compute:
 * - `verdict`: experiment verdicts, every condition against the baseline, on each of these
 *   statistics of its windows (`experiments/condition-summary.ts`). A per-request metric is read
 *   from each request's row; a rate is judged on each window's own rate (`mean` over windows),
 *   and only by the kinds that ask for rates (speculative decoding);
 * - `embeddingVerdict`: the same verdicts where the experiment ran an embeddings workload, which has
 *   no first token and no decode: latency per request, and each window's inputs per second;
 * - `speed`: the verdicts a recommendation counts as faster or slower (`experiments/recommend.ts`);
 * - `gate`: the regression gate (`inferlab check`, `runs.check`), with the statistics `--metrics`
 *   accepts; a rate is judged on the mean of its windows' rates (`mean`);
 * - `history`: build histories (`inferlab history`, the History view), with the statistics
 *   `--metric` accepts; a rate takes none (`rate`);
 * - `slo`: a latency an SLO may limit (`--slo`, a spec's `slo`): goodput, the recommendation's SLO
 *   gate (at p95), capacity (at its percentile), the SLO fields of the app's forms.
 * Direction (`higherIsBetter`) is read from the table wherever a metric is judged.
 */
export interface Judged {
  verdict?: readonly ('p50' | 'p95' | 'mean')[];
  embeddingVerdict?: readonly ('p50' | 'p95' | 'mean')[];
  speed?: true;
  gate?: readonly ('p50' | 'p90' | 'p95' | 'p99' | 'mean')[];
  history?: readonly ('p50' | 'p95' | 'rate')[];
  slo?: true;
}
export type JudgedPlace = keyof Judged;

export interface MetricDefinition {
  /** What headers call it: "TTFT p50". A rate's label names its unit ("output tok/s"), a distribution's does not. */
  label: string;
  unit: 'ms' | 'tok/s' | 'req/s' | 'inputs/s' | 'documents/s';
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
  judged: Judged;
}

/** The run summary's distribution table, in the terminal and in the app alike. */
const SUMMARY_TABLE = ['n', 'mean', 'p50', 'p90', 'p95', 'p99', 'max'] as const;

// Generic over `shows` and `judged` so that each metric's places stay in its type: the runs list,
// Compare and every judged place are checked at compile time against the figures they have behind them.
function latency<const P extends SummaryPart, const S extends Shows, const J extends Judged = Record<never, never>>(
  label: string,
  part: P,
  shows: S,
  judged?: J,
  gloss?: string,
) {
  return {
    label,
    unit: 'ms',
    higherIsBetter: false,
    perRequest: true,
    summary: { part, statistics: DISTRIBUTION_STATISTICS },
    ...(gloss === undefined ? {} : { gloss }),
    shows,
    judged: (judged ?? {}) as J,
  } as const;
}

function rate<const P extends SummaryPart, const S extends Shows, const J extends Judged = Record<never, never>>(
  label: string,
  unit: 'tok/s' | 'req/s' | 'inputs/s' | 'documents/s',
  digits: number,
  summary: { part: P; field?: string },
  shows: S,
  judged?: J,
) {
  return {
    label,
    unit,
    higherIsBetter: true,
    perRequest: false,
    summary: { ...summary, statistics: ['rate'] },
    digits,
    shows,
    judged: (judged ?? {}) as J,
  } as const;
}

/** The statistics the gate accepts for a latency. */
const GATE_STATISTICS = ['p50', 'p90', 'p95', 'p99', 'mean'] as const;

// The order here is the order of rows and columns in every place.
export const METRIC_TABLE = {
  ttft_ms: latency(
    'TTFT',
    'metrics',
    {
      cli: SUMMARY_TABLE,
      ui: SUMMARY_TABLE,
      runsList: ['p50'],
      compare: ['p50', 'p95'],
      perTurn: ['p50', 'p90'],
      conditions: ['p50', 'p95'],
      report: ['p50', 'p95'],
      reportChart: ['p50'],
      parquet: ['p50', 'p95', 'p99'],
    },
    { verdict: ['p50', 'p95'], speed: true, gate: GATE_STATISTICS, history: ['p50', 'p95'], slo: true },
  ),
  tpot_ms: latency(
    'TPOT',
    'metrics',
    {
      cli: SUMMARY_TABLE,
      ui: SUMMARY_TABLE,
      compare: ['p50', 'p95'],
      conditions: ['p50'],
      report: ['p50'],
      reportChart: ['p50'],
      parquet: ['p50', 'p95'],
    },
    { verdict: ['p50', 'p95'], speed: true, gate: GATE_STATISTICS, history: ['p50', 'p95'], slo: true },
  ),
  itl_ms: latency('ITL', 'metrics', { cli: SUMMARY_TABLE, ui: SUMMARY_TABLE, parquet: ['p50', 'p99'] }),
  e2e_ms: latency(
    'E2E',
    'metrics',
    {
      cli: SUMMARY_TABLE,
      ui: SUMMARY_TABLE,
      compare: ['p50', 'p95'],
      embeddingConditions: ['p50', 'p95'],
      report: ['p50'],
      parquet: ['p50', 'p95'],
    },
    { embeddingVerdict: ['p50', 'p95'], gate: GATE_STATISTICS, history: ['p50', 'p95'], slo: true },
  ),
  queue_ms: latency('queue', 'metrics', { cli: SUMMARY_TABLE, ui: SUMMARY_TABLE }),
  client_overhead_ms: latency('client overhead', 'metrics', { cli: SUMMARY_TABLE, ui: SUMMARY_TABLE }),
  ttft_from_schedule_ms: latency('TTFT from schedule', 'schedule_latency', { cli: SUMMARY_TABLE }),
  e2e_from_schedule_ms: latency('E2E from schedule', 'schedule_latency', { cli: SUMMARY_TABLE }),
  ttfr_ms: latency('TTFR', 'reasoning', { cli: SUMMARY_TABLE }, {}, 'reasoning'),
  ttfa_ms: latency('TTFA', 'reasoning', { cli: SUMMARY_TABLE }, {}, 'answer'),
  ttfc_ms: latency('TTFC', 'tool_calls', { cli: SUMMARY_TABLE, ui: SUMMARY_TABLE }, {}, 'first call chunk'),
  tool_call_ms: latency('call complete', 'tool_calls', { cli: SUMMARY_TABLE, ui: SUMMARY_TABLE }, {}, 'arguments parsed'),
  // Runs that show pictures to a managed server: per encode and per picture, from the server's log (the summary's `images` line shows them).
  image_encode_ms: latency('image encode', 'images', { parquet: ['p50', 'p95'] }),
  image_decode_ms: latency('image decode', 'images', { parquet: ['p50'] }),
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
    { verdict: ['mean'], gate: ['mean'], history: ['rate'] },
  ),
  total_tokens_per_s: rate('total tok/s', 'tok/s', 1, { part: 'throughput' }, { cli: ['rate'] }),
  goodput_requests_per_s: rate('goodput req/s', 'req/s', 2, { part: 'goodput', field: 'requests_per_s' }, { parquet: ['rate'] }),
  // Embeddings and reranking runs only (null elsewhere); the run summaries print them on a line of their own.
  embedding_inputs_per_s: rate(
    'inputs/s',
    'inputs/s',
    1,
    { part: 'embeddings', field: 'inputs_per_s' },
    { compare: ['rate'], embeddingConditions: ['rate'], parquet: ['rate'] },
    { embeddingVerdict: ['mean'] },
  ),
  rerank_documents_per_s: rate(
    'documents/s',
    'documents/s',
    1,
    { part: 'rerank', field: 'inputs_per_s' },
    { compare: ['rate'], parquet: ['rate'] },
  ),
} as const satisfies Record<string, MetricDefinition>;

export type TableMetric = keyof typeof METRIC_TABLE;

type Table = typeof METRIC_TABLE;

/** The metrics a place shows. */
export type MetricShownIn<P extends Place> = {
  [K in TableMetric]: Table[K]['shows'] extends { readonly [Q in P]: readonly Statistic[] } ? K : never;
}[TableMetric];

/** The per-request metrics among them. */
export type DistributionShownIn<P extends Place> = Extract<MetricShownIn<P>, PerRequestMetric>;

/** Every `metric statistic` a place shows ("ttft_ms p50", "output_tokens_per_s rate"). */
export type ColumnShownIn<P extends Place> = {
  [K in TableMetric]: Table[K]['shows'] extends { readonly [Q in P]: readonly (infer S extends Statistic)[] } ? `${K} ${S}` : never;
}[TableMetric];

type PerRequestMetric = { [K in TableMetric]: Table[K]['perRequest'] extends true ? K : never }[TableMetric];

/** The metrics a place judges. */
export type MetricJudgedIn<J extends JudgedPlace> = {
  [K in TableMetric]: Table[K]['judged'] extends { readonly [Q in J]: unknown } ? K : never;
}[TableMetric];

/** The per-request metrics among them, and the rates. */
export type DistributionJudgedIn<J extends JudgedPlace> = Extract<MetricJudgedIn<J>, PerRequestMetric>;
export type RateJudgedIn<J extends JudgedPlace> = Exclude<MetricJudgedIn<J>, PerRequestMetric>;

/** The places that judge a metric on statistics of it. */
export type StatisticPlace = 'verdict' | 'embeddingVerdict' | 'gate' | 'history';

/** Each metric a place judges with the statistics it judges it on: `{ metric: 'ttft_ms'; statistic: 'p50' | 'p95' } | …`. */
export type JudgedStatistic<J extends StatisticPlace> = {
  [K in MetricJudgedIn<J>]: {
    metric: K;
    statistic: Table[K]['judged'] extends { readonly [Q in J]: readonly (infer S)[] } ? S : never;
  };
}[MetricJudgedIn<J>];

/** The metrics a run summary holds in one part (`metrics`, `schedule_latency`, …). */
export type MetricInPart<P extends SummaryPart> = {
  [K in TableMetric]: Table[K]['summary']['part'] extends P ? K : never;
}[TableMetric];

/** Any table of metrics: the real one, or a copy a test extends. */
type AnyTable = Readonly<Record<string, MetricDefinition>>;

/** The metrics a place judges, in the table's order. */
export function metricsJudgedIn<J extends JudgedPlace>(place: J): MetricJudgedIn<J>[];
export function metricsJudgedIn(place: JudgedPlace, table: AnyTable): string[];
export function metricsJudgedIn(place: JudgedPlace, table: AnyTable = METRIC_TABLE): string[] {
  return Object.entries(table).flatMap(([metric, definition]) => (definition.judged[place] ? [metric] : []));
}

/** Each metric a place judges with each statistic it judges it on, in the table's order. */
export function judgedStatistics<J extends StatisticPlace>(place: J): JudgedStatistic<J>[];
export function judgedStatistics(place: StatisticPlace, table: AnyTable): { metric: string; statistic: Statistic }[];
export function judgedStatistics(place: StatisticPlace, table: AnyTable = METRIC_TABLE): unknown[] {
  return Object.entries(table).flatMap(([metric, definition]) =>
    (definition.judged[place] ?? []).map((statistic: Statistic) => ({ metric, statistic })),
  );
}

/** The metrics a run summary holds in one part, in the table's order. */
export function metricsInPart<P extends SummaryPart>(part: P): MetricInPart<P>[];
export function metricsInPart(part: SummaryPart, table: AnyTable): string[];
export function metricsInPart(part: SummaryPart, table: AnyTable = METRIC_TABLE): string[] {
  return Object.entries(table).flatMap(([metric, definition]) => (definition.summary.part === part ? [metric] : []));
}

/** Whether a metric is measured per request (a distribution), narrowing it to those. */
export function isPerRequest<M extends TableMetric>(metric: M): metric is Extract<M, PerRequestMetric> {
  return METRIC_TABLE[metric].perRequest;
}

/** "a, b or c": a list of names in a sentence. */
export function namesInWords(names: readonly string[]): string {
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
}

/**
 * A metric as verdicts, histories and the gate write it, with or without its statistic
 * (`tpot_ms`, `ttft_ms p95`, `ttft_ms:p95`, `output_tokens_per_s mean`); null for a name the
 * table does not hold.
 */
export function metricDefinition(name: string): MetricDefinition | null {
  const metric = name.split(/[\s:]/)[0]!;
  return Object.hasOwn(METRIC_TABLE, metric) ? METRIC_TABLE[metric as TableMetric] : null;
}
