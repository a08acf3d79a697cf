import type { RunListItem } from './contract/results';
import type { Distribution } from './contract/runs';
import {
  DISTRIBUTION_STATISTICS,
  METRIC_TABLE,
  type ColumnShownIn,
  type MetricDefinition,
  type MetricShownIn,
  type Place,
  type Statistic,
  type TableMetric,
} from './metric-table';

/**
 * Each place's metric columns, read from the metric table (metric-table.ts): which metrics, in
 * which order, with which statistics, labels and units. The faces format the cells; what they
 * show comes from here, so a metric added to the table shows wherever its `shows` says.
 */

export interface MetricColumn<M extends TableMetric = TableMetric> {
  metric: M;
  statistic: Statistic;
  definition: MetricDefinition;
}

export interface ShownMetric<M extends TableMetric = TableMetric> {
  metric: M;
  definition: MetricDefinition;
  statistics: readonly Statistic[];
}

/** The metrics a place shows, in the table's order, each with the statistics it shows there. */
export function metricsShownIn<P extends Place>(place: P): ShownMetric<MetricShownIn<P>>[] {
  return Object.entries(METRIC_TABLE).flatMap(([metric, definition]): ShownMetric<MetricShownIn<P>>[] => {
    const statistics = (definition as MetricDefinition).shows[place];
    return statistics ? [{ metric: metric as MetricShownIn<P>, definition, statistics }] : [];
  });
}

/** One column (or row) per metric and statistic a place shows, in the table's order. */
export function columnsShownIn<P extends Place>(place: P): (MetricColumn<MetricShownIn<P>> & { key: ColumnShownIn<P> })[] {
  return metricsShownIn(place).flatMap(({ metric, definition, statistics }) =>
    statistics.map((statistic) => ({ metric, statistic, definition, key: `${metric} ${statistic}` as ColumnShownIn<P> })),
  );
}

/** The places that lay out an experiment's conditions, each a table (or the report's charts). */
export type ConditionPlace = 'conditions' | 'report' | 'reportChart';

/**
 * The metric columns of an experiment's conditions: the place's own, or, where every condition ran
 * an embeddings workload, `embeddingConditions` (latency per request and inputs/s), since such a
 * condition has no first token, no decode and no output tokens to fill the usual ones.
 */
export function conditionColumns(place: ConditionPlace, conditions: readonly object[]): MetricColumn[] {
  return everyOneRanEmbeddings(conditions) ? columnsShownIn('embeddingConditions') : columnsShownIn(place);
}

/** Whether a condition (or run summary) ran an embeddings workload: it then holds inputs/s, and no first token, decode or output tokens. */
export const ranEmbeddings = (source: object | null | undefined): boolean => holdsPart(source, 'embedding_inputs_per_s');

/** Whether every one of these conditions ran embeddings, so that they are laid out, judged and traded off as embeddings. */
export const everyOneRanEmbeddings = (conditions: readonly object[]): boolean =>
  conditions.length > 0 && conditions.every((condition) => ranEmbeddings(condition));

/** The statistic columns of a place's distribution table: every one a distribution there shows, in the usual order. */
export function distributionColumns(place: Place): Statistic[] {
  const shown = new Set(metricsShownIn(place).flatMap(({ definition, statistics }) => (definition.perRequest ? statistics : [])));
  return DISTRIBUTION_STATISTICS.filter((statistic) => shown.has(statistic));
}

/** "TTFT p50"; a rate's label alone ("output tok/s"), since it has one figure. */
export function columnLabel(metric: TableMetric, statistic: Statistic): string {
  const { label } = METRIC_TABLE[metric];
  return statistic === 'rate' ? label : `${label} ${statistic}`;
}

/** A label at the head of a column in the app and the report, which start their headers with a capital. */
export function headerLabel(metric: TableMetric, statistic: Statistic): string {
  const label = columnLabel(metric, statistic);
  return label.charAt(0).toUpperCase() + label.slice(1);
}

/** A distribution's row in the run summaries: the summary's own field name, glossed where the name needs it ("ttfr_ms (reasoning)"). */
export function summaryRowName(metric: TableMetric): string {
  const definition: MetricDefinition = METRIC_TABLE[metric];
  return definition.gloss ? `${metric} (${definition.gloss})` : metric;
}

function partOf(source: object | null | undefined, metric: TableMetric): Record<string, unknown> | null {
  const part = (source as Record<string, unknown> | null | undefined)?.[METRIC_TABLE[metric].summary.part];
  return typeof part === 'object' && part !== null ? (part as Record<string, unknown>) : null;
}

/** Whether a run summary (or condition) holds the part a metric lives in at all: an embeddings figure is in embeddings runs only. */
export function holdsPart(source: object | null | undefined, metric: TableMetric): boolean {
  return partOf(source, metric) !== null;
}

const fieldOf = (metric: TableMetric) => (METRIC_TABLE[metric].summary as MetricDefinition['summary']).field ?? metric;

/**
 * A per-request metric's distribution in a run summary or an experiment condition; null where the
 * source lacks it (schedule latency of a closed-loop run, reasoning of a run without any).
 */
export function metricDistribution(source: object | null | undefined, metric: TableMetric): Distribution | null {
  const distribution = partOf(source, metric)?.[fieldOf(metric)];
  return typeof distribution === 'object' && distribution !== null ? (distribution as Distribution) : null;
}

/**
 * One statistic of a metric, or a rate's figure, from a run summary or an experiment condition;
 * null where the source lacks it. Reads stored summaries of any age, so any part may be missing.
 */
export function metricFigure(source: object | null | undefined, metric: TableMetric, statistic: Statistic): number | null {
  if (statistic === 'rate') return (partOf(source, metric)?.[fieldOf(metric)] ?? null) as number | null;
  return (metricDistribution(source, metric)?.[statistic] ?? null) as number | null;
}

/** A tail percentile withheld because n cannot support it (it is null while there are requests). */
export function withheldForN(distribution: Distribution, statistic: Statistic): boolean {
  return (statistic === 'p90' || statistic === 'p95' || statistic === 'p99') && distribution[statistic] === null && distribution.n > 0;
}

/** The rows of a run summary's distribution table: each metric the place shows that the summary holds. */
export function distributionRows(source: object, place: 'cli' | 'ui') {
  return metricsShownIn(place).flatMap(({ metric, definition, statistics }) => {
    const distribution = definition.perRequest ? metricDistribution(source, metric) : null;
    return distribution ? [{ metric, name: summaryRowName(metric), distribution, statistics }] : [];
  });
}

/** The rates a run summary's throughput line gives, with their figures. */
export function rateFigures(source: object, place: 'cli' | 'ui') {
  return metricsShownIn(place).flatMap(({ metric, definition }) =>
    definition.perRequest ? [] : [{ metric, definition, value: metricFigure(source, metric, 'rate') }],
  );
}

/**
 * The figures a runs list row carries: the store keeps these with each run so the list reads no
 * summary. Typed by the table, so a metric given a `runsList` column without a figure here does not
 * compile.
 */
export const RUN_LIST_FIGURES: { readonly [C in ColumnShownIn<'runsList'>]: (run: RunListItem) => number | null } = {
  'ttft_ms p50': (run) => run.ttftP50,
  'output_tokens_per_s rate': (run) => run.outputTokensPerS,
};

/** How a face writes a figure: a latency, a percentile that n may not support, and a rate. */
export interface FigureFormat {
  ms(value: number | null | undefined): string;
  percentile(distribution: Distribution, statistic: 'p50' | 'p90' | 'p95' | 'p99'): string;
  rate(value: number | null | undefined, definition: MetricDefinition): string;
}

const isPercentile = (statistic: Statistic): statistic is 'p50' | 'p90' | 'p95' | 'p99' =>
  statistic === 'p50' || statistic === 'p90' || statistic === 'p95' || statistic === 'p99';

/** One metric column's cell for a run summary or an experiment condition, in a face's own format. */
export function metricCellText(source: object, { metric, statistic, definition }: MetricColumn, format: FigureFormat): string {
  if (!definition.perRequest) return format.rate(metricFigure(source, metric, statistic), definition);
  const distribution = metricDistribution(source, metric);
  if (distribution && isPercentile(statistic)) return format.percentile(distribution, statistic);
  return format.ms(metricFigure(source, metric, statistic));
}
