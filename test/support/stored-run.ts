import fs from 'node:fs';
import path from 'node:path';
import { renderRunExport } from '../../src/main/store/export-run';
import type { RunStore } from '../../src/main/store/run-store';
import type { StoredRequest } from '../../src/main/store/run-rows';
import type { RequestMetrics } from '../../src/shared/contract/measurement';
import { runExportFiles } from '../../src/shared/run-export-files';
import { summarizeCompleted } from './measured-request';

const metrics = (ttft: number | null, e2e: number | null): RequestMetrics => ({
  ttft_ms: ttft,
  e2e_ms: e2e,
  tpot_ms: ttft !== null && e2e !== null ? (e2e - ttft) / 3 : null,
  queue_ms: ttft === null ? null : ttft / 4,
  client_overhead_ms: e2e === null ? null : 0.25,
  output_tokens: e2e === null ? null : 4,
  output_tokens_source: e2e === null ? null : 'usage',
  ttfr_ms: null,
  ttfa_ms: ttft,
  ttft_from_schedule_ms: ttft === null ? null : ttft + 0.5,
  e2e_from_schedule_ms: e2e === null ? null : e2e + 0.5,
  decode_tokens_per_s: e2e === null ? null : 120.5,
  itl_ms: [],
});

/**
 * A finished run with the kinds of request a real one holds (warmup, measured, a conversation
 * turn with reasoning, a failure) and telemetry, written through the same store calls a run uses.
 */
export function storeSampleRun(runs: RunStore, options: { private?: boolean } = {}): string {
  const id = runs.createRun({
    kind: 'workload',
    modelRef: 'demo:q8_0',
    modelPath: '/models/demo-q8_0.gguf',
    modelSizeBytes: 1234,
    modelSha256: 'a'.repeat(64),
    engine: { origin: 'managed', backend: 'cpu', version: 'b1234' },
    server: { effectiveConfig: { build: 'b1234', modelFileType: 'Q8_0' } },
    manifest: { load: { mode: 'closed', concurrency: 2 }, profile: { name: 'default', parallelSlots: 1 } },
    workload: { name: 'chat-short', revision: 'rev-1', source: 'builtin' } as never,
    environment: { cpu: { cores: 2 } },
    private: options.private,
  });
  const base = {
    headersMs: 1.5,
    promptTokens: 12,
    usage: { prompt_tokens: 12, completion_tokens: 4, cached_tokens: 3 },
    finishReason: 'stop',
    httpStatus: 200,
    errorClass: null,
    errorMessage: null,
    timings: { prompt_n: 12, prompt_ms: 2.5, predicted_n: 4, predicted_ms: 9.75, cache_n: 3, draft_n: null, draft_n_accepted: null },
    promptText: 'What is the capital of France?',
    outputText: 'Paris, =1+1 "quoted"',
  };
  const requests: StoredRequest[] = [
    {
      ...base,
      seq: 0,
      warmup: true,
      group: 'chat',
      itemId: 'a',
      t0Ms: 0.125,
      endMs: 12.5,
      metrics: metrics(3.25, 12.375),
      chunkOffsetsMs: [3.25, 6.5, 9.125],
    },
    {
      ...base,
      seq: 1,
      warmup: false,
      group: 'chat',
      itemId: 'b',
      scheduledMs: 20,
      t0Ms: 20.0625,
      endMs: 40.1,
      metrics: metrics(4.1, 18.7),
      // Reasoning streams first; its chunks are among the content chunks, as the client records them.
      chunkOffsetsMs: [1.5, 2.5, 4.1, 8.2, 12.3],
      accepted: true,
      acceptance: { checks: [{ kind: 'contains', passed: true }] },
      reasoningText: 'thinking about it',
      reasoningChunkOffsetsMs: [1.5, 2.5],
      session: 1,
      turn: 2,
    },
    {
      ...base,
      seq: 2,
      warmup: false,
      group: 'facts',
      itemId: 'c',
      t0Ms: 41.5,
      headersMs: null,
      metrics: metrics(null, null),
      chunkOffsetsMs: [],
      usage: null,
      finishReason: null,
      httpStatus: 503,
      errorClass: 'http_error',
      errorMessage: 'loading model',
      timings: null,
      accepted: false,
      outputText: null,
    },
  ];
  runs.addRequests(id, requests, options);
  runs.setBlockHashes(id, [
    { seq: 0, hashes: ['h1', 'h2'] },
    { seq: 1, hashes: ['h1', 'h3'] },
  ]);
  runs.setReasoningTokens(id, [{ seq: 1, tokens: 5, note: null }]);
  runs.saveTelemetry(id, [
    { series: 'gpu0.memory_used', unit: 'MiB', points: Float64Array.from([0, 512, 250, 640.5]) },
    { series: 'gpu0.utilization', unit: '%', points: Float64Array.from([0, 10, 250, Number.NaN]) },
    { series: 'server.cpu', unit: '%', points: Float64Array.from([0, 95.5, 250, 101]) },
  ]);
  const summary = summarizeCompleted(runs.measuredRequests(id), {
    runId: id,
    workload: { name: 'chat-short', revision: 'rev-1' },
    load: { mode: 'closed', concurrency: 2 },
  });
  runs.finishRun(id, 'completed', null, summary);
  return id;
}

/** Writes a run's export files as `inferlab export` does; returns the folder. */
export function writeRunExport(runs: RunStore, runId: string, folder: string): string {
  fs.mkdirSync(folder, { recursive: true });
  const { run, ...rendered } = renderRunExport(runs, runId);
  for (const file of runExportFiles({ fileBase: run.id, ...rendered })) fs.writeFileSync(path.join(folder, file.name), file.content);
  return folder;
}
