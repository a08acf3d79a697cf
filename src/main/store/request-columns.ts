import type { ExportedRequest } from './read-run-export';
import { decodeChunkOffsets, type RequestRow } from './run-rows';

/**
 * A stored request column and the requests.jsonl field that carries it, converted each way.
 * Export and import walk the one list, so no column can leave in an export and be dropped on
 * the way back in. An exported value of undefined leaves the field out of the line.
 */
export interface RequestColumn {
  column: keyof RequestRow;
  field: keyof ExportedRequest;
  exported(row: RequestRow): unknown;
  imported(record: ExportedRequest): unknown;
}

export const parseJson = (text: string | null): unknown => (text === null ? null : JSON.parse(text));
export const jsonOrNull = (value: unknown): string | null => (value === null || value === undefined ? null : JSON.stringify(value));
const offsetsBlob = (offsets: readonly number[]) => Buffer.from(Float64Array.from(offsets).buffer);
/** A stored Uint32Array blob, copied so its alignment never matters. */
export const uint32View = (blob: Buffer): Uint32Array => new Uint32Array(Uint8Array.from(blob).buffer);

/** Carried as stored, under its own name; a column older rows lack exports as null. */
function same(column: keyof RequestRow & keyof ExportedRequest): RequestColumn {
  return { column, field: column, exported: (row) => row[column] ?? null, imported: (record) => record[column] };
}

/** Stored as JSON text, exported as the value it holds. */
function json(
  column: 'block_hashes' | 'timings_json' | 'acceptance_json' | 'tool_calls_json',
  field: 'block_hashes' | 'server_timings' | 'acceptance' | 'tool_calls',
): RequestColumn {
  return { column, field, exported: (row) => parseJson(row[column] ?? null), imported: (record) => jsonOrNull(record[field]) };
}

/** A column newer than the first exports: an older line lacks the field, which imports as null. */
function added(column: keyof RequestRow & keyof ExportedRequest): RequestColumn {
  return { column, field: column, exported: (row) => row[column] ?? null, imported: (record) => record[column] ?? null };
}

/** In the order requests.jsonl lists them. */
export const REQUEST_COLUMNS: readonly RequestColumn[] = [
  same('seq'),
  { column: 'warmup', field: 'warmup', exported: (row) => row.warmup === 1, imported: (record) => (record.warmup ? 1 : 0) },
  { column: 'group_name', field: 'group', exported: (row) => row.group_name, imported: (record) => record.group },
  same('item_id'),
  same('conversation'),
  same('turn'),
  json('block_hashes', 'block_hashes'),
  same('scheduled_ms'),
  same('t0_ms'),
  same('headers_ms'),
  same('end_ms'),
  same('ttft_ms'),
  same('ttfr_ms'),
  same('ttfa_ms'),
  added('ttfc_ms'),
  added('tool_call_ms'),
  same('tpot_ms'),
  same('e2e_ms'),
  same('ttft_from_schedule_ms'),
  same('e2e_from_schedule_ms'),
  same('queue_ms'),
  same('client_overhead_ms'),
  same('decode_tokens_per_s'),
  {
    column: 'chunk_offsets',
    field: 'chunk_offsets_ms',
    exported: (row) => decodeChunkOffsets(row.chunk_offsets),
    imported: (record) => offsetsBlob(record.chunk_offsets_ms),
  },
  {
    column: 'reasoning_chunk_offsets',
    field: 'reasoning_chunk_offsets_ms',
    exported: (row) => decodeChunkOffsets(row.reasoning_chunk_offsets ?? null),
    // The writer stores no blob for a request that streamed no reasoning.
    imported: (record) => (record.reasoning_chunk_offsets_ms.length ? offsetsBlob(record.reasoning_chunk_offsets_ms) : null),
  },
  {
    column: 'chunk_answer_chars',
    field: 'chunk_answer_chars',
    exported: (row) => (row.chunk_answer_chars ? Array.from(uint32View(row.chunk_answer_chars)) : undefined),
    imported: (record) => (record.chunk_answer_chars?.length ? Buffer.from(Uint32Array.from(record.chunk_answer_chars).buffer) : null),
  },
  same('reasoning_tokens'),
  same('reasoning_tokens_note'),
  same('reasoning_sha256'),
  same('reasoning_chars'),
  same('prompt_tokens'),
  same('cached_tokens'),
  same('output_tokens'),
  same('output_tokens_source'),
  same('finish_reason'),
  same('http_status'),
  same('error_class'),
  same('error_message'),
  json('timings_json', 'server_timings'),
  {
    column: 'accepted',
    field: 'accepted',
    exported: (row) => (row.accepted === null ? null : row.accepted === 1),
    imported: (record) => (record.accepted === null ? null : record.accepted ? 1 : 0),
  },
  json('acceptance_json', 'acceptance'),
  json('tool_calls_json', 'tool_calls'),
  same('prompt_sha256'),
  same('output_sha256'),
  same('prompt_chars'),
  same('output_chars'),
  // Text only when the run kept it: a private run's lines carry hashes and lengths alone.
  { column: 'prompt_text', field: 'prompt', exported: (row) => row.prompt_text ?? undefined, imported: (record) => record.prompt ?? null },
  { column: 'output_text', field: 'output', exported: (row) => row.output_text ?? undefined, imported: (record) => record.output ?? null },
  {
    column: 'reasoning_text',
    field: 'reasoning',
    exported: (row) => row.reasoning_text || undefined,
    imported: (record) => record.reasoning ?? null,
  },
];
