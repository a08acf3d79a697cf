import type { DecisionRecord } from '../../shared/contract/results';
import type { ExperimentResult, VerdictRow } from '../../shared/contract/experiments';
import type { RunSummary } from '../../shared/contract/runs';
import { columnsShownIn, metricFigure } from '../../shared/metric-columns';
import type { ParquetColumn, ParquetType } from './parquet-table';
import type { ExportedRequest } from './read-run-export';
import { parseJson, REQUEST_COLUMNS } from './request-columns';
import type { RequestRow, RunRow } from './run-rows';

/**
 * The tables of a Parquet export and their columns. Ids are text, instants are UTC timestamps,
 * durations are milliseconds as doubles, counts are whole numbers, and anything nested is JSON
 * text in a column whose name ends in `_json`. docs/METRICS.md ("Parquet export") lists them.
 */

type Value = string | number | boolean | null;

/** Stored JSON, or null where it does not parse: the raw text still goes out in its `*_json` column. */
function storedJson(text: string | null): unknown {
  try {
    return parseJson(text);
  } catch {
    return null;
  }
}
const text = (value: unknown): string | null => (value === null || value === undefined ? null : String(value));
const json = (value: unknown): string | null => (value === null || value === undefined ? null : JSON.stringify(value));

function column<Row>(name: string, type: ParquetType, value: (row: Row) => Value): ParquetColumn<Row> {
  return { name, type, value };
}

export interface RunTableRow {
  run: RunRow;
  /** Read as stored: summaries written by older versions, or imported, may lack any part. */
  summary: DeepPartial<RunSummary> | null;
}

type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? DeepPartial<T[K]> | null : T[K] | null };

/**
 * The summary's headline figures, from the metric table (`shows.parquet`), in its order. Their
 * names are part of the file format (docs/METRICS.md, pinned by test/unit/parquet-export.test.ts):
 * a distribution's statistic sits before the unit (`ttft_p95_ms`), a rate is named as its metric.
 */
const HEADLINE_COLUMNS: readonly ParquetColumn<RunTableRow>[] = columnsShownIn('parquet').map(({ metric, statistic }) =>
  column<RunTableRow>(statistic === 'rate' ? metric : `${metric.replace(/_ms$/, '')}_${statistic}_ms`, 'double', ({ summary }) =>
    metricFigure(summary, metric, statistic),
  ),
);

export const RUN_COLUMNS: readonly ParquetColumn<RunTableRow>[] = [
  column('run_id', 'string', ({ run }) => run.id),
  column('kind', 'string', ({ run }) => run.kind),
  column('status', 'string', ({ run }) => run.status),
  column('status_reason', 'string', ({ run }) => run.status_reason),
  column('started_at', 'timestamp', ({ run }) => run.started_at),
  column('ended_at', 'timestamp', ({ run }) => run.ended_at),
  column('private', 'boolean', ({ run }) => run.private === 1),
  column('model_ref', 'string', ({ run }) => run.model_ref),
  column('model_path', 'string', ({ run }) => run.model_path),
  column('model_size_bytes', 'int64', ({ run }) => run.model_size_bytes),
  column('model_sha256', 'string', ({ run }) => run.model_sha256),
  column('workload_name', 'string', ({ run }) => run.workload_name),
  column('workload_revision', 'string', ({ run }) => run.workload_revision),
  column('requests_attempted', 'int64', ({ summary }) => summary?.requests?.attempted ?? null),
  column('requests_completed', 'int64', ({ summary }) => summary?.requests?.completed ?? null),
  column('requests_failed', 'int64', ({ summary }) => summary?.requests?.failed ?? null),
  ...HEADLINE_COLUMNS,
  column('engine_json', 'string', ({ run }) => run.engine_json),
  column('server_json', 'string', ({ run }) => run.server_json),
  column('configuration_json', 'string', ({ run }) => run.manifest_json),
  column('environment_json', 'string', ({ run }) => run.environment_json),
  column('summary_json', 'string', ({ run }) => run.summary_json),
];

export function runTableRow(run: RunRow): RunTableRow {
  return { run, summary: storedJson(run.summary_json) as DeepPartial<RunSummary> | null };
}

/**
 * Each requests.jsonl field's type in requests.parquet; the chunk arrival offsets go to
 * chunks.parquet instead. Typed against the export's own record, so a field added there
 * without a type here does not compile.
 */
const REQUEST_FIELD_TYPES = {
  seq: 'int64',
  warmup: 'boolean',
  group: 'string',
  item_id: 'string',
  conversation: 'int64',
  turn: 'int64',
  block_hashes: 'json',
  scheduled_ms: 'double',
  t0_ms: 'double',
  headers_ms: 'double',
  end_ms: 'double',
  ttft_ms: 'double',
  ttfr_ms: 'double',
  ttfa_ms: 'double',
  ttfc_ms: 'double',
  tool_call_ms: 'double',
  tpot_ms: 'double',
  e2e_ms: 'double',
  ttft_from_schedule_ms: 'double',
  e2e_from_schedule_ms: 'double',
  queue_ms: 'double',
  client_overhead_ms: 'double',
  decode_tokens_per_s: 'double',
  chunk_offsets_ms: 'chunks',
  reasoning_chunk_offsets_ms: 'chunks',
  chunk_answer_chars: 'chunks',
  reasoning_tokens: 'int64',
  reasoning_tokens_note: 'string',
  reasoning_sha256: 'string',
  reasoning_chars: 'int64',
  prompt_tokens: 'int64',
  cached_tokens: 'int64',
  output_tokens: 'int64',
  output_tokens_source: 'string',
  finish_reason: 'string',
  http_status: 'int32',
  error_class: 'string',
  error_message: 'string',
  server_timings: 'json',
  accepted: 'boolean',
  acceptance: 'json',
  tool_calls: 'json',
  prompt_sha256: 'string',
  output_sha256: 'string',
  prompt_chars: 'int64',
  output_chars: 'int64',
  prompt: 'string',
  output: 'string',
  reasoning: 'string',
} as const satisfies Record<keyof ExportedRequest, ParquetType | 'json' | 'chunks'>;

export interface RequestTableRow {
  runId: string;
  row: RequestRow;
}

export const REQUEST_PARQUET_COLUMNS: readonly ParquetColumn<RequestTableRow>[] = [
  column('run_id', 'string', ({ runId }) => runId),
  ...REQUEST_COLUMNS.flatMap(({ field, exported }): ParquetColumn<RequestTableRow>[] => {
    const type = REQUEST_FIELD_TYPES[field];
    if (type === 'chunks') return [];
    if (type === 'json') return [column(`${field}_json`, 'string', ({ row }) => json(exported(row)))];
    return [column(field, type, ({ row }) => (exported(row) ?? null) as Value)];
  }),
];

/** One streamed chunk of one request: when it arrived, the gap since the one before (inter-token latency), and whether it was reasoning. */
export interface ChunkTableRow {
  runId: string;
  seq: number;
  chunk: number;
  offsetMs: number;
  gapMs: number | null;
  reasoning: boolean;
}

export const CHUNK_COLUMNS: readonly ParquetColumn<ChunkTableRow>[] = [
  column('run_id', 'string', (chunk) => chunk.runId),
  column('seq', 'int64', (chunk) => chunk.seq),
  column('chunk', 'int32', (chunk) => chunk.chunk),
  column('offset_ms', 'double', (chunk) => chunk.offsetMs),
  column('gap_ms', 'double', (chunk) => chunk.gapMs),
  column('reasoning', 'boolean', (chunk) => chunk.reasoning),
];

export function chunkRows(runId: string, seq: number, offsets: readonly number[], reasoningOffsets: readonly number[]): ChunkTableRow[] {
  const reasoning = new Set(reasoningOffsets);
  return offsets.map((offsetMs, chunk) => ({
    runId,
    seq,
    chunk,
    offsetMs,
    gapMs: chunk === 0 ? null : offsetMs - offsets[chunk - 1]!,
    reasoning: reasoning.has(offsetMs),
  }));
}

export interface TelemetryTableRow {
  runId: string;
  series: string;
  unit: string;
  tMs: number;
  value: number;
}

export const TELEMETRY_COLUMNS: readonly ParquetColumn<TelemetryTableRow>[] = [
  column('run_id', 'string', (point) => point.runId),
  column('series', 'string', (point) => point.series),
  column('unit', 'string', (point) => point.unit),
  column('t_ms', 'double', (point) => point.tMs),
  column('value', 'double', (point) => point.value),
];

export interface ExperimentTableRow {
  id: string;
  kind: string;
  status: string;
  created_at: string;
  protocol_json: string;
  result_json: string | null;
}

const resultOf = (experiment: ExperimentTableRow) => storedJson(experiment.result_json) as ExperimentResult | null;

export const EXPERIMENT_COLUMNS: readonly ParquetColumn<ExperimentTableRow>[] = [
  column('experiment_id', 'string', (experiment) => experiment.id),
  column('kind', 'string', (experiment) => experiment.kind),
  column('status', 'string', (experiment) => experiment.status),
  column('created_at', 'timestamp', (experiment) => experiment.created_at),
  column('recommendation', 'string', (experiment) => resultOf(experiment)?.recommendation?.choice ?? null),
  column('recommendation_reason', 'string', (experiment) => resultOf(experiment)?.recommendation?.reason ?? null),
  column('protocol_json', 'string', (experiment) => experiment.protocol_json),
  column('result_json', 'string', (experiment) => experiment.result_json),
];

export interface ConditionTableRow {
  experiment_id: string;
  condition: string;
  window: number;
  run_id: string;
}

export const CONDITION_COLUMNS: readonly ParquetColumn<ConditionTableRow>[] = [
  column('experiment_id', 'string', (row) => row.experiment_id),
  column('condition', 'string', (row) => row.condition),
  column('window', 'int32', (row) => row.window),
  column('run_id', 'string', (row) => row.run_id),
];

export interface VerdictTableRow {
  experimentId: string;
  verdict: VerdictRow;
}

const bound = (interval: [number, number] | null | undefined, side: 0 | 1) => interval?.[side] ?? null;

export const VERDICT_COLUMNS: readonly ParquetColumn<VerdictTableRow>[] = [
  column('experiment_id', 'string', (row) => row.experimentId),
  column('metric', 'string', ({ verdict }) => verdict.metric),
  column('a', 'string', ({ verdict }) => verdict.a),
  column('b', 'string', ({ verdict }) => verdict.b),
  column('a_value', 'double', ({ verdict }) => verdict.a_value),
  column('b_value', 'double', ({ verdict }) => verdict.b_value),
  column('difference', 'double', ({ verdict }) => verdict.difference),
  column('ci_low', 'double', ({ verdict }) => bound(verdict.ci, 0)),
  column('ci_high', 'double', ({ verdict }) => bound(verdict.ci, 1)),
  column('relative_difference', 'double', ({ verdict }) => verdict.relative_difference ?? null),
  column('relative_ci_low', 'double', ({ verdict }) => bound(verdict.relative_ci, 0)),
  column('relative_ci_high', 'double', ({ verdict }) => bound(verdict.relative_ci, 1)),
  column('confidence', 'double', ({ verdict }) => verdict.confidence ?? null),
  column('equivalence_margin', 'double', ({ verdict }) => verdict.equivalence_margin ?? null),
  column('verdict', 'string', ({ verdict }) => verdict.verdict),
  column('windows_a', 'int32', ({ verdict }) => verdict.windows?.[0] ?? null),
  column('windows_b', 'int32', ({ verdict }) => verdict.windows?.[1] ?? null),
  column('requests_a', 'int64', ({ verdict }) => verdict.requests?.[0] ?? null),
  column('requests_b', 'int64', ({ verdict }) => verdict.requests?.[1] ?? null),
  column('note', 'string', ({ verdict }) => verdict.note ?? null),
];

export function verdictRows(experiment: ExperimentTableRow): VerdictTableRow[] {
  const verdicts: unknown = resultOf(experiment)?.verdicts;
  return (Array.isArray(verdicts) ? (verdicts as VerdictRow[]) : [])
    .filter((verdict) => typeof verdict === 'object' && verdict !== null)
    .map((verdict) => ({ experimentId: experiment.id, verdict }));
}

export const DECISION_COLUMNS: readonly ParquetColumn<DecisionRecord>[] = [
  column('decision_id', 'string', (decision) => decision.decision_id),
  column('experiment_id', 'string', (decision) => text(decision.experiment_id)),
  column('decided_at', 'timestamp', (decision) => decision.decided_at),
  column('decided_by', 'string', (decision) => decision.decided_by),
  column('chosen', 'string', (decision) => decision.chosen),
  column('chosen_run_ids_json', 'string', (decision) => json(decision.chosen_run_ids)),
  column('reason', 'string', (decision) => decision.reason),
];
