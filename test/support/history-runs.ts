import type { Db } from '../../src/main/store/database';
import type { RunStore } from '../../src/main/store/run-store';
import type { RunStatus, StoredRequest } from '../../src/main/store/run-rows';
import { requestMetrics, storedRequest } from './stored-request';

export interface HistoryRunSpec {
  startedAt: string;
  /** Null: a run whose engine facts were not recorded. */
  engine: { commit: string; backend: string; serverPath?: string } | null;
  /** TPOT of each successful measured request; TTFT is a tenth of it, E2E ten times it. */
  tpots: number[];
  outputTokensPerS?: number | null;
  status?: Exclude<RunStatus, 'running'>;
  modelSha256?: string;
  workloadRevision?: string;
  profile?: Record<string, unknown>;
  load?: Record<string, unknown>;
  /** The workload file as the manifest records it; absent, the run cannot be measured again. */
  workloadSource?: string;
}

export const HISTORY_PROFILE = { name: 'default', contextSize: 2048, parallelSlots: 1, flashAttention: 'auto' };

function request(seq: number, tpot: number, overrides: Partial<StoredRequest> = {}): StoredRequest {
  return storedRequest(seq, {
    t0Ms: seq * 100,
    endMs: seq * 100 + tpot * 10,
    metrics: requestMetrics({ ttft_ms: tpot / 10, e2e_ms: tpot * 10, tpot_ms: tpot, output_tokens: 10 }),
    promptTokens: 8,
    promptText: 'p',
    outputText: 'o',
    ...overrides,
  });
}

/**
 * A stored run as a history reads it, through the store calls a run uses: its measured
 * requests, plus a warmup and a failed request whose huge TPOT must never count.
 */
export function storeHistoryRun(store: { db: Db; runs: RunStore }, spec: HistoryRunSpec): string {
  const id = store.runs.createRun({
    kind: 'workload',
    modelRef: 'demo:q8_0',
    modelPath: '/models/demo-q8_0.gguf',
    modelSizeBytes: 1000,
    modelSha256: spec.modelSha256 ?? 'a'.repeat(64),
    engine: spec.engine ? { origin: 'managed', version: spec.engine.commit, ...spec.engine } : null,
    server: null,
    manifest: {
      workload: { name: 'chat-short', revision: spec.workloadRevision ?? 'rev-1', source: spec.workloadSource },
      target: { kind: 'model', model: 'demo:q8_0', profile: spec.profile ?? HISTORY_PROFILE },
      load: spec.load ?? { mode: 'closed', concurrency: 1 },
    },
    workload: { name: 'chat-short', revision: spec.workloadRevision ?? 'rev-1', source: 'builtin', groups: [] } as never,
  });
  const measured = spec.tpots.map((tpot, index) => request(index + 2, tpot));
  store.runs.addRequests(id, [
    request(0, 9999, { warmup: true }),
    request(1, 9999, { errorClass: 'http_error', httpStatus: 503, finishReason: null }),
    ...measured,
  ]);
  const throughput = spec.outputTokensPerS === undefined ? 100 : spec.outputTokensPerS;
  store.runs.finishRun(id, spec.status ?? 'completed', null, { throughput: { output_tokens_per_s: throughput } });
  store.db.prepare('UPDATE runs SET started_at = ? WHERE id = ?').run(spec.startedAt, id);
  return id;
}

/** Requests whose TPOT p50 (linear interpolation) is `median`: median − 1, median, median + 1. */
export const around = (median: number) => [median - 1, median, median + 1];
