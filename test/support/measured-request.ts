import { summarizeRun } from '../../src/main/metrics/run-summary';
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

/**
 * The summary of a completed run of workload "w" over `rows`, closed loop at concurrency 1
 * unless `input` says otherwise.
 */
export function summarizeCompleted(rows: readonly MeasuredRequest[], input: Partial<Parameters<typeof summarizeRun>[0]> = {}) {
  return summarizeRun({
    runId: 'r',
    status: 'completed',
    statusReason: null,
    workload: { name: 'w', revision: 'x' },
    rows,
    load: { mode: 'closed', concurrency: 1 },
    slo: null,
    ...input,
  });
}
