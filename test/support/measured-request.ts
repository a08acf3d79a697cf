import type { MeasuredRequest } from '../../src/shared/contract/measurement';

/**
 * A hand-made measured request: sent at seq × 100 ms, first token after 10 ms, done after 50 ms,
 * three chunks (inter-token gaps 2 and 3 ms), 20 output tokens; override what a case needs.
 */
export function measuredRequest(seq: number, overrides: Partial<MeasuredRequest> = {}): MeasuredRequest {
  return {
    warmup: false,
    group_name: 'g',
    scheduled_ms: null,
    t0_ms: seq * 100,
    end_ms: seq * 100 + 50,
    ttft_ms: 10,
    e2e_ms: 50,
    tpot_ms: 2,
    queue_ms: 0,
    client_overhead_ms: 1,
    output_tokens: 20,
    prompt_tokens: 30,
    cached_tokens: 0,
    error_class: null,
    accepted: null,
    chunk_offsets_ms: Float64Array.from([10, 12, 15]),
    ...overrides,
  };
}
