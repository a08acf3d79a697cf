/**
 * Measurement vocabulary shared by the store, the CLI, exports and the UI. Names follow
 * DESIGN.md "Measurement contract"; `null` always means "not measured", never zero.
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
