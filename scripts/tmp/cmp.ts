import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openAppStore } from '../../src/main/store/app-store';
import { SAVED_PROFILE_RULES } from '../../src/main/engines/llamacpp/profile-rules';
import { summarizeRun } from '../../src/main/metrics/run-summary';
import { compareRuns } from '../../src/main/services/compare-runs';
import { seededRandom } from '../../src/main/core/random';
import type { StoredRequest } from '../../src/main/store/run-store';
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cmp-'));
const store = openAppStore(path.join(dir, 'c.db'), SAVED_PROFILE_RULES);
const random = seededRandom(3);
const ids: string[] = [];
for (let run = 0; run < 20; run++) {
  const runId = store.runs.createRun({ kind: 'bench', modelRef: `demo:bench-${run}`, modelPath: null, modelSizeBytes: null, modelSha256: null, engine: null, server: null, manifest: {} });
  ids.push(runId);
  const requests: StoredRequest[] = Array.from({ length: 10_000 }, (_, seq) => ({ seq, warmup: false, group: 'g', itemId: 'i', t0Ms: seq, headersMs: 1, endMs: seq + 50,
    metrics: { ttft_ms: 20 + random() * 10 + run, e2e_ms: 50 + random() * 5, tpot_ms: 1 + random(), itl_ms: [], output_tokens: 16, output_tokens_source: 'usage', queue_ms: 0, client_overhead_ms: 0.3, decode_tokens_per_s: 500, ttfr_ms: null, ttfa_ms: null, ttft_from_schedule_ms: null, e2e_from_schedule_ms: null },
    promptTokens: 8, usage: null, finishReason: 'length', httpStatus: 200, errorClass: null, errorMessage: null, timings: null, chunkOffsetsMs: [], promptText: null, outputText: null }));
  for (let i = 0; i < requests.length; i += 500) store.runs.addRequests(runId, requests.slice(i, i + 500));
  store.runs.finishRun(runId, 'completed', null, summarizeRun({ runId, status: 'completed', statusReason: null, workload: { name: 'bench', revision: 'x' }, rows: store.runs.measuredRequests(runId), load: { mode: 'closed', concurrency: 1 }, slo: null }));
}
for (let i = 0; i < 4; i++) {
  const t = performance.now();
  const c = compareRuns(store.runs, ids);
  const t1 = performance.now() - t;
  const s = JSON.stringify(c);
  console.log(`compareRuns ${t1.toFixed(0)} ms, JSON ${(performance.now() - t - t1).toFixed(0)} ms, ${(s.length / 1e6).toFixed(2)} MB`);
}
store.close();
