/**
 * `npm run bench`: performance figures printed as one table. Not a test: numbers vary by
 * machine; the targets are printed next to them.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { findFreePort } from '../src/main/core/ports';
import { locateEngine } from '../src/main/engines/llamacpp/locate-engine';
import { defaultProfile } from '../src/main/engines/llamacpp/launch-args';
import { summarize } from '../src/main/metrics/distribution';
import { deriveRequestMetrics } from '../src/main/metrics/request-metrics';
import { summarizeRun } from '../src/main/metrics/run-summary';
import { generateLoad } from '../src/main/runner/load-generator';
import { createKeepAliveAgent, streamCompletion } from '../src/main/runner/stream-client';
import { DEFAULT_TIMEOUTS } from '../src/main/server/managed-server';
import { ServerManager } from '../src/main/server/server-manager';
import { openAppStore } from '../src/main/store/app-store';
import type { StoredRequest } from '../src/main/store/run-store';
import { TelemetrySession } from '../src/main/telemetry/telemetry-session';

interface Row {
  figure: string;
  value: string;
  target: string;
}
const rows: Row[] = [];
const fmt = (value: number | null, unit = 'ms', digits = 3) => (value === null ? '—' : `${value.toFixed(digits)} ${unit}`);

/**
 * The smallest streaming client that can report the same number: raw http, line splitting,
 * JSON.parse of the last chunk, a fresh connection per request (llama-server closes it after streaming).
 */
function minimalRequest(baseUrl: string, body: object): Promise<number | null> {
  return new Promise((resolve) => {
    const payload = JSON.stringify({ ...body, stream: true });
    const t0 = performance.now();
    const request = http.request(`${baseUrl}/v1/chat/completions`, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } }, (response) => {
      let buffer = '';
      let timings: { prompt_ms: number; predicted_ms: number } | null = null;
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        buffer += chunk;
        let index;
        while ((index = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, index);
          buffer = buffer.slice(index + 1);
          if (line.startsWith('data: {') && line.includes('"timings"')) timings = JSON.parse(line.slice(6)).timings;
        }
      });
      response.on('end', () => resolve(timings ? performance.now() - t0 - (timings.prompt_ms + timings.predicted_ms) : null));
    });
    request.on('error', () => resolve(null));
    request.end(payload);
  });
}

async function clientOverhead(): Promise<void> {
  const { engine } = await locateEngine();
  if (!engine) {
    rows.push({ figure: 'client overhead', value: 'skipped: no llama-server (run ./bin/inferlab setup)', target: '' });
    return;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inferlab-bench-'));
  const store = await openAppStore(path.join(dir, 'bench.db'));
  const servers = new ServerManager(async () => engine, store.sessions, dir, { timeouts: DEFAULT_TIMEOUTS, choosePort: () => findFreePort() });
  try {
    const server = await servers.start({ modelRef: 'demo:q4_k_m', profile: { ...defaultProfile(), parallelSlots: 32, contextSize: 32 * 256 } });
    const body = { messages: [{ role: 'user', content: 'Count to ten.' }], max_tokens: 16, temperature: 0, ignore_eos: true };
    for (const concurrency of [1, 32]) {
      const agent = createKeepAliveAgent(concurrency + 4);
      const ours: number[] = [];
      const minimal: number[] = [];
      const perClient = 200;
      for (let round = 0; round < 2; round++) {
        await Promise.all(Array.from({ length: concurrency }, async () => {
          for (let i = 0; i < Math.ceil(perClient / concurrency); i++) {
            const completion = await streamCompletion({ baseUrl: server.baseUrl!, body, agent });
            const overhead = deriveRequestMetrics(completion).client_overhead_ms;
            if (overhead !== null) ours.push(overhead);
            const raw = await minimalRequest(server.baseUrl!, { ...body, stream_options: { include_usage: true } });
            if (raw !== null) minimal.push(raw);
          }
        }));
      }
      agent.destroy();
      const a = summarize(ours).p50;
      const b = summarize(minimal).p50;
      rows.push({ figure: `client_overhead_ms p50, concurrency ${concurrency} (Infer Lab / minimal client, n=${ours.length}/${minimal.length})`, value: `${fmt(a)} / ${fmt(b)}  (difference ${fmt(a !== null && b !== null ? a - b : null)})`, target: 'Infer Lab adds ≤ 0.5 ms' });
    }
    // Sampler cost: every sampler this machine has, at 4 Hz, for 10 s against the idle server.
    const origin = performance.now();
    const session = new TelemetrySession({ clock: () => performance.now() - origin, serverPid: server.pid, metricsUrl: `${server.baseUrl}/metrics`, intervalMs: 250 });
    session.start();
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    await session.stop();
    const telemetry = session.summary();
    rows.push({ figure: `sampler overhead at 4 Hz (${telemetry.gpu_unavailable_reason ? 'process + /metrics; no nvidia-smi here' : 'nvidia-smi + process + /metrics'})`, value: `${telemetry.sampler.cpu_pct.toFixed(3)} % of one core`, target: '< 1 %' });
  } finally {
    await servers.dispose();
    store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function generatorSlip(): Promise<void> {
  // An SSE endpoint that answers at once: measuring the client needs a server faster than the client.
  const chunk = 'data: {"choices":[{"delta":{"content":"x"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}\n\ndata: [DONE]\n\n';
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const agent = createKeepAliveAgent(300);
  const slips: number[] = [];
  const rate = 500;
  const started = performance.now();
  await generateLoad({
    load: { mode: 'open', rate, burstiness: 1, maxOutstanding: 256 }, stop: { requests: 5000, durationMs: null }, warmup: 0, halt: new AbortController().signal,
    send: async (_index, _warmup, scheduledAt) => {
      const completion = await streamCompletion({ baseUrl, body: { messages: [] }, agent });
      slips.push(completion.t0 - scheduledAt!);
    },
  });
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();
  server.close();
  const slip = summarize(slips);
  rows.push({ figure: `open-loop generator at ${rate} req/s offered (5000 requests), p50 / p99 slip`, value: `${fmt(slip.p50)} / ${fmt(slip.p99)}; achieved ${(slips.length / elapsed).toFixed(1)} req/s`, target: 'p99 slip < 5 ms' });
}

async function storeIngest(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inferlab-bench-'));
  const store = await openAppStore(path.join(dir, 'ingest.db'));
  try {
    const runId = store.runs.createRun({ kind: 'bench', modelRef: null, modelPath: null, modelSizeBytes: null, modelSha256: null, engine: null, server: null, manifest: {} });
    const offsets = Array.from({ length: 256 }, (_, i) => 10 + i * 1.5);
    const make = (seq: number): StoredRequest => ({
      seq, warmup: false, group: seq % 2 ? 'a' : 'b', itemId: `i${seq % 10}`, scheduledMs: null, t0Ms: seq * 2, headersMs: 1, endMs: seq * 2 + 400,
      metrics: { ttft_ms: 10 + (seq % 7), e2e_ms: 400, tpot_ms: 1.5, itl_ms: [], output_tokens: 256, output_tokens_source: 'usage', queue_ms: 1, client_overhead_ms: 0.3, decode_tokens_per_s: 600 },
      promptTokens: 64, usage: { prompt_tokens: 64, completion_tokens: 256, cached_tokens: 0 }, finishReason: 'length', httpStatus: 200, errorClass: null, errorMessage: null,
      timings: { prompt_n: 64, prompt_ms: 8, predicted_n: 256, predicted_ms: 380, cache_n: 0 }, chunkOffsetsMs: offsets, accepted: null, promptText: 'p'.repeat(200), outputText: 'o'.repeat(1000),
    });
    const requests = Array.from({ length: 10_000 }, (_, seq) => make(seq));
    const ingestStart = performance.now();
    for (let i = 0; i < requests.length; i += 64) store.runs.addRequests(runId, requests.slice(i, i + 64));
    const ingest = performance.now() - ingestStart;
    const summaryStart = performance.now();
    const summary = summarizeRun({ runId, status: 'completed', statusReason: null, workload: { name: null, revision: null }, rows: store.runs.requestsForSummary(runId), load: { mode: 'closed', concurrency: 64 }, slo: null });
    const summaryMs = performance.now() - summaryStart;
    rows.push({ figure: 'store 10,000 requests × 256 chunks (batches of 64)', value: fmt(ingest / 1000, 's', 2), target: '< 3 s' });
    rows.push({ figure: `summarize that run (${summary.metrics.itl_ms.n} ITL samples)`, value: fmt(summaryMs / 1000, 's', 3), target: '< 0.5 s' });
  } finally {
    store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  process.stderr.write(`Infer Lab benchmarks on ${os.cpus()[0]?.model ?? 'unknown CPU'} (${os.availableParallelism()} cores), Node ${process.version}\n`);
  await storeIngest();
  await generatorSlip();
  await clientOverhead();
  const width = Math.max(...rows.map((row) => row.figure.length));
  const valueWidth = Math.max(...rows.map((row) => row.value.length));
  process.stdout.write(`${'figure'.padEnd(width)}  ${'value'.padEnd(valueWidth)}  target\n`);
  for (const row of rows) process.stdout.write(`${row.figure.padEnd(width)}  ${row.value.padEnd(valueWidth)}  ${row.target}\n`);
}

await main();
