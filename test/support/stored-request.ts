import type { RunStore } from '../../src/main/store/run-store';
import type { NewRun, StoredRequest } from '../../src/main/store/run-rows';
import type { RequestMetrics } from '../../src/shared/contract/measurement';

/** A request's derived metrics: first token at 1 ms, done at 10 ms, one output token; override what a case needs. */
export function requestMetrics(overrides: Partial<RequestMetrics> = {}): RequestMetrics {
  return {
    ttft_ms: 1,
    e2e_ms: 10,
    tpot_ms: null,
    queue_ms: null,
    client_overhead_ms: null,
    output_tokens: 1,
    output_tokens_source: 'usage',
    ttfr_ms: null,
    ttfa_ms: null,
    ttft_from_schedule_ms: null,
    e2e_from_schedule_ms: null,
    decode_tokens_per_s: null,
    itl_ms: [],
    ...overrides,
  };
}

/** A successful measured request as the store takes it, with no text and no server timings; override what a case needs. */
export function storedRequest(seq: number, overrides: Partial<StoredRequest> = {}): StoredRequest {
  return {
    seq,
    warmup: false,
    t0Ms: 0,
    headersMs: 1,
    metrics: requestMetrics(),
    promptTokens: 1,
    usage: null,
    finishReason: 'stop',
    httpStatus: 200,
    errorClass: null,
    errorMessage: null,
    timings: null,
    chunkOffsetsMs: [],
    promptText: null,
    outputText: null,
    ...overrides,
  };
}

/** A run that knows nothing of its model, engine or server: what a test storing requests creates first. */
export function createBareRun(runs: RunStore, overrides: Partial<NewRun> = {}): string {
  return runs.createRun({
    kind: 'test',
    modelRef: null,
    modelPath: null,
    modelSizeBytes: null,
    modelSha256: null,
    engine: null,
    server: null,
    manifest: {},
    ...overrides,
  });
}
