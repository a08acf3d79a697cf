/**
 * Measurement vocabulary shared by the store, the CLI, exports and the UI. Names follow
 * DESIGN.md "Measurement contract"; `null` always means "not measured", never zero.
 */

export type RequestErrorClass = 'http_status' | 'connect' | 'first_token_timeout' | 'total_timeout' | 'partial_stream' | 'malformed_chunk' | 'cancelled';

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

export interface RequestMetrics {
  ttft_ms: number | null;
  e2e_ms: number | null;
  tpot_ms: number | null;
  itl_ms: number[];
  output_tokens: number | null;
  /** Where output_tokens came from: the server's usage (authoritative) or a client count. */
  output_tokens_source: 'usage' | 'client_chunks' | null;
  queue_ms: number | null;
  client_overhead_ms: number | null;
  decode_tokens_per_s: number | null;
}
