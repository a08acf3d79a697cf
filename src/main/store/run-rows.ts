import type { MeasuredRequest, RequestMetrics, ServerTimings, Usage } from '../../shared/contract/measurement';
import type { ResolvedWorkload } from '../workload/workload-types';
import { float64View } from './float64-blob';

/**
 * What a stored run and its requests look like to the code that reads them, and the decoders from a
 * stored row to the shapes the summary and the views take: apart from RunStore, so a caller that
 * only reads rows needs none of the store's SQL.
 */
export type RunStatus = 'running' | 'completed' | 'aborted' | 'interrupted' | 'failed';

export interface NewRun {
  kind: string;
  modelRef: string | null;
  modelPath: string | null;
  modelSizeBytes: number | null;
  modelSha256: string | null;
  engine: unknown;
  server: unknown;
  manifest: unknown;
  workload?: ResolvedWorkload;
  environment?: unknown;
  private?: boolean;
}

export interface StoredRequest {
  seq: number;
  warmup: boolean;
  group?: string | null;
  itemId?: string | null;
  /** Offsets in ms from the run's start on the monotonic clock. */
  scheduledMs?: number | null;
  t0Ms: number;
  headersMs: number | null;
  endMs?: number | null;
  metrics: RequestMetrics;
  promptTokens: number | null;
  usage: Usage | null;
  finishReason: string | null;
  httpStatus: number | null;
  errorClass: string | null;
  errorMessage: string | null;
  timings: ServerTimings | null;
  chunkOffsetsMs: readonly number[];
  /** For each content chunk, the answer characters it added; absent where not recorded. */
  chunkAnswerChars?: readonly number[];
  accepted?: boolean | null;
  acceptance?: unknown;
  promptText: string | null;
  /** The answer only. */
  outputText: string | null;
  /** Reasoning (`reasoning_content`), kept apart from the answer; empty or absent when none streamed. */
  reasoningText?: string | null;
  reasoningChunkOffsetsMs?: readonly number[];
  /** In a conversation: its place in the run's send order, and the turn (from 1). */
  session?: number | null;
  turn?: number | null;
  /** A request that offered tools: what its calls came to, and the calls themselves (kept only where the run keeps text). */
  toolCalls?: StoredToolCalls | null;
}

export interface StoredToolCalls {
  calls: number;
  valid: number;
  argument_chars: number;
  text: { name: string; arguments: string }[];
}

/** A run a list leaves out, and why: it names the run so that it can be deleted. */
export interface UnreadableRun {
  id: string;
  /** The export's name of the column that does not read: summary, server, engine or configuration. */
  field: string;
  reason: string;
}

/** A list's runs, and those it left out. */
export interface RunHeads {
  heads: RunHead[];
  unreadable: UnreadableRun[];
}

/** A run as a list shows it; see `listRunHeads`. */
export interface RunHead {
  id: string;
  started_at: string;
  status: string;
  status_reason: string | null;
  model_ref: string | null;
  workload_name: string | null;
  kind: string;
  request_count: number;
  ttft_p50: number | null;
  output_tokens_per_s: number | null;
  model_file_type: string | null;
  engine_origin: string | null;
  engine_backend: string | null;
  has_engine: 0 | 1;
  imported_from: string | null;
}

export interface RunRow {
  id: string;
  kind: string;
  status: RunStatus;
  status_reason: string | null;
  started_at: string;
  ended_at: string | null;
  model_ref: string | null;
  workload_name: string | null;
  workload_revision: string | null;
  private: number;
  summary_json: string | null;
  manifest_json: string;
  engine_json: string | null;
  server_json: string | null;
  environment_json: string | null;
  model_path: string | null;
  model_size_bytes: number | null;
  model_sha256: string | null;
}

export interface RequestRow {
  seq: number;
  warmup: number;
  group_name: string | null;
  item_id: string | null;
  scheduled_ms: number | null;
  t0_ms: number;
  headers_ms: number | null;
  end_ms: number | null;
  ttft_ms: number | null;
  e2e_ms: number | null;
  tpot_ms: number | null;
  queue_ms: number | null;
  client_overhead_ms: number | null;
  output_tokens: number | null;
  output_tokens_source: string | null;
  prompt_tokens: number | null;
  cached_tokens: number | null;
  finish_reason: string | null;
  http_status: number | null;
  error_class: string | null;
  error_message: string | null;
  timings_json: string | null;
  chunk_offsets: Buffer | null;
  accepted: number | null;
  acceptance_json: string | null;
  prompt_text: string | null;
  output_text: string | null;
  prompt_sha256: string | null;
  output_sha256: string | null;
  prompt_chars: number | null;
  output_chars: number | null;
  // From schema version 7; optional so rows built by hand for older shapes still type-check.
  ttfr_ms?: number | null;
  ttfa_ms?: number | null;
  ttft_from_schedule_ms?: number | null;
  e2e_from_schedule_ms?: number | null;
  decode_tokens_per_s?: number | null;
  reasoning_chunk_offsets?: Buffer | null;
  reasoning_text?: string | null;
  reasoning_sha256?: string | null;
  reasoning_chars?: number | null;
  reasoning_tokens?: number | null;
  reasoning_tokens_note?: string | null;
  // From schema version 9.
  conversation?: number | null;
  turn?: number | null;
  // From schema version 10: a JSON list.
  block_hashes?: string | null;
  // From schema version 13.
  ttfc_ms?: number | null;
  tool_call_ms?: number | null;
  tool_calls_json?: string | null;
  // From schema version 14: a Uint32Array blob.
  chunk_answer_chars?: Buffer | null;
}

/** A stored request as the summary takes it. */
export function toMeasuredRequest(row: RequestRow): MeasuredRequest {
  return {
    warmup: row.warmup !== 0,
    group_name: row.group_name,
    scheduled_ms: row.scheduled_ms,
    t0_ms: row.t0_ms,
    end_ms: row.end_ms,
    ttft_ms: row.ttft_ms,
    tpot_ms: row.tpot_ms,
    e2e_ms: row.e2e_ms,
    queue_ms: row.queue_ms,
    client_overhead_ms: row.client_overhead_ms,
    output_tokens: row.output_tokens,
    prompt_tokens: row.prompt_tokens,
    cached_tokens: row.cached_tokens,
    error_class: row.error_class,
    accepted: row.accepted === null ? null : row.accepted !== 0,
    chunk_offsets_ms: row.chunk_offsets ? float64View(row.chunk_offsets) : null,
    ttfr_ms: row.ttfr_ms ?? null,
    ttfa_ms: row.ttfa_ms ?? null,
    ttft_from_schedule_ms: row.ttft_from_schedule_ms ?? null,
    e2e_from_schedule_ms: row.e2e_from_schedule_ms ?? null,
    reasoning_chars: row.reasoning_chars ?? null,
    reasoning_tokens: row.reasoning_tokens ?? null,
    reasoning_tokens_note: row.reasoning_tokens_note ?? null,
    turn: row.turn ?? null,
    conversation: row.conversation ?? null,
    decode_tokens_per_s: row.decode_tokens_per_s ?? null,
    ...draftCounts(parsedTimings(row)),
    ttfc_ms: row.ttfc_ms ?? null,
    tool_call_ms: row.tool_call_ms ?? null,
    ...toolCallCounts(row.tool_calls_json ?? null),
  };
}

/** The counts in a stored tool-call record; null for each it lacks or where it does not parse. */
function toolCallCounts(json: string | null): Pick<MeasuredRequest, 'tool_calls' | 'tool_calls_valid' | 'tool_argument_tokens'> {
  let record: Record<string, unknown> = {};
  try {
    const parsed: unknown = json === null ? null : JSON.parse(json);
    if (typeof parsed === 'object' && parsed !== null) record = parsed as Record<string, unknown>;
  } catch {
    // An unreadable record reads as no calls counted, never as zero.
  }
  const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : null);
  return { tool_calls: count(record.calls), tool_calls_valid: count(record.valid), tool_argument_tokens: count(record.argument_tokens) };
}

/** Stored server timings as written, each field unchecked: older and imported runs may lack any of them. */
export type StoredTimings = Partial<Record<keyof ServerTimings, unknown>>;

/**
 * A request's stored server timings; null when it has none or they do not parse, so that an
 * unreadable record reads as counts the server did not report, never as zero.
 */
export function parsedTimings(row: Pick<RequestRow, 'timings_json'>): StoredTimings | null {
  if (!row.timings_json) return null;
  try {
    const timings: unknown = JSON.parse(row.timings_json);
    return typeof timings === 'object' && timings !== null ? (timings as StoredTimings) : null;
  } catch {
    return null;
  }
}

/** The draft counts in a stored timings object; null for each the server did not report. */
export function draftCounts(timings: StoredTimings | null): { draft_tokens: number | null; draft_accepted_tokens: number | null } {
  return {
    draft_tokens: typeof timings?.draft_n === 'number' ? timings.draft_n : null,
    draft_accepted_tokens: typeof timings?.draft_n_accepted === 'number' ? timings.draft_n_accepted : null,
  };
}

export function decodeChunkOffsets(blob: Buffer | null): number[] {
  return Array.from(float64View(blob));
}
