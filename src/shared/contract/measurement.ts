/**
 * Measurement vocabulary shared by the store, the CLI, exports and the UI. Names follow
 * docs/METRICS.md; `null` always means "not measured", never zero.
 */

export type RequestErrorClass =
  'http_status' | 'connect' | 'first_token_timeout' | 'total_timeout' | 'partial_stream' | 'malformed_chunk' | 'cancelled';

/** llama.cpp's per-request `timings` from the final streamed chunk. */
export interface ServerTimings {
  prompt_n: number;
  prompt_ms: number;
  predicted_n: number;
  predicted_ms: number;
  cache_n: number | null;
  /** Speculative decoding: tokens drafted and tokens of those the model accepted; null where the server drafted nothing (never 0 for absent). */
  draft_n: number | null;
  draft_n_accepted: number | null;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number | null;
}

/** Per-request numbers; docs/METRICS.md gives each definition and its measurement boundary. */
export interface RequestMetrics {
  /** First chunk carrying generated text of either kind (answer or reasoning) − t0. */
  ttft_ms: number | null;
  /** First chunk carrying reasoning text − t0; null when the request streamed no reasoning. */
  ttfr_ms: number | null;
  /** First chunk carrying answer text − t0; null when the request streamed no answer. */
  ttfa_ms: number | null;
  /** First chunk carrying a piece of a function call − t0; null when the answer made no call. */
  ttfc_ms?: number | null;
  /** Last chunk carrying a piece of a call − t0, where every call's arguments parse as JSON; null otherwise. */
  tool_call_ms?: number | null;
  /** Chunk carrying `finish_reason` − t0. */
  e2e_ms: number | null;
  /** (e2e − ttft) / (output_tokens − 1); null below two output tokens. */
  tpot_ms: number | null;
  itl_ms: number[];
  output_tokens: number | null;
  /** Where output_tokens came from: the server's usage (authoritative) or a client count. */
  output_tokens_source: 'usage' | 'client_chunks' | null;
  /** Estimate: ttft − timings.prompt_ms, floored at 0. */
  queue_ms: number | null;
  /** e2e − (prompt_ms + predicted_ms): includes any wait for a free server slot. */
  client_overhead_ms: number | null;
  /** (predicted_n − 1) / predicted_ms: decode steps per second, the first token being free. */
  decode_tokens_per_s: number | null;
  /** Open loop: the same end points measured from the request's scheduled time, not its send. */
  ttft_from_schedule_ms: number | null;
  e2e_from_schedule_ms: number | null;
}

/**
 * One request as the run summary needs it: plain values, whoever produced them (the store's
 * rows, a test, an import). Times are milliseconds on the run's clock.
 */
export interface MeasuredRequest {
  warmup: boolean;
  group_name: string | null;
  /** When an open-loop schedule meant to send it; null in a closed loop. */
  scheduled_ms: number | null;
  t0_ms: number;
  end_ms: number | null;
  ttft_ms: number | null;
  tpot_ms: number | null;
  e2e_ms: number | null;
  queue_ms: number | null;
  client_overhead_ms: number | null;
  output_tokens: number | null;
  prompt_tokens: number | null;
  cached_tokens: number | null;
  /** Null for a success. */
  error_class: string | null;
  /** Null when no acceptance check could be evaluated. */
  accepted: boolean | null;
  /** Arrival of each content chunk, ms after t0; inter-token latencies are their differences. */
  chunk_offsets_ms: Float64Array | null;
  ttfr_ms?: number | null;
  ttfa_ms?: number | null;
  ttft_from_schedule_ms?: number | null;
  e2e_from_schedule_ms?: number | null;
  reasoning_chars?: number | null;
  reasoning_tokens?: number | null;
  reasoning_tokens_note?: string | null;
  /** A conversation's turn (an agent exchange's step), from 1; null for a single request. */
  turn?: number | null;
  /** The send a turn or step belongs to (its place in the run's send order); null for a single request. */
  conversation?: number | null;
  ttfc_ms?: number | null;
  tool_call_ms?: number | null;
  /** A request that offered tools: the calls its answer made, those valid, and their arguments in the server's tokens. */
  tool_calls?: number | null;
  tool_calls_valid?: number | null;
  tool_argument_tokens?: number | null;
  /** Speculative decoding: the server's timings.draft_n and draft_n_accepted; null where it reported none. */
  draft_tokens?: number | null;
  draft_accepted_tokens?: number | null;
  /** The server's own decode pace, (predicted_n − 1) / predicted_ms; null where it reported no timings. */
  decode_tokens_per_s?: number | null;
}
