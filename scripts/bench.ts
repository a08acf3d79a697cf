/**
 * `npm run bench`: performance figures printed as one table. Not a test: numbers vary by
 * machine; the targets are printed next to them.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { runToCompletion } from '../src/main/core/process';
import { locateEngine, toolPath } from '../src/main/engines/llamacpp/locate-engine';
import { findCachedBuild } from '../src/main/engines/llamacpp/engine-build';
import { engineCacheDir } from '../src/main/core/paths';
import { ENGINE_BACKENDS } from '../src/shared/contract/engine';
import { resolveModelRef } from '../src/main/models/demo-models';
import { defaultProfile } from '../src/main/engines/llamacpp/launch-args';
import { summarize } from '../src/main/metrics/distribution';
import { deriveRequestMetrics } from '../src/main/metrics/request-metrics';
import { summarizeRun } from '../src/main/metrics/run-summary';
import { generateLoad } from '../src/main/runner/load-generator';
import { createKeepAliveAgent, streamCompletion } from '../src/main/client/stream-client';
import { SAVED_PROFILE_RULES } from '../src/main/engines/llamacpp/profile-rules';
import { openAppStore } from '../src/main/store/app-store';
import type { StoredRequest } from '../src/main/store/run-rows';
import { TelemetrySession } from '../src/main/telemetry/telemetry-session';
import { launchBenchBrowser } from './bench/bench-processes';
import { chromiumPath } from '../src/main/doctor';
import { seededRandom } from '../src/main/core/random';
import { evaluateAcceptance, evaluateAcceptanceAsync } from '../src/main/workload/acceptance';
import type { BenchRow } from './bench/bench-row';
import { streamsAtScale } from './bench/streams-at-scale';
import { longContexts } from './bench/long-contexts';
import { runsFirstPaint } from './bench/runs-first-paint';
import { compareIntervals } from './bench/compare-intervals';
import { pythonReferenceRow } from './bench/python-reference';
import { minimalRequest } from './bench/minimal-request';
import { clientOnlyOverhead } from './bench/client-only-overhead';
import { workloadResolveTimes } from './bench/workload-resolve';
import { startManagedBenchServer } from './bench/managed-bench-server';
import { embeddingsThroughput } from './bench/embeddings-throughput';
import { raceFidelity } from './bench/race-fidelity';
import { roundPairedMedian, roundsForHalfWidth, roundsInterval } from './bench/paired-rounds';
import { createBareRun, requestMetrics, storedRequest } from '../test/support/stored-request';

type Row = BenchRow;
const rows: Row[] = [];
const fmt = (value: number | null, unit = 'ms', digits = 3) => (value === null ? '—' : `${value.toFixed(digits)} ${unit}`);

/**
 * Alternating rounds of the overhead pairs; each round's difference is printed, so its spread shows beside the goal.
 * Three by default; each row says how many rounds its spread needs for ±0.5 ms, and
 * `INFERLAB_BENCH_OVERHEAD_ROUNDS=N npm run bench -- overhead` runs that many.
 */
const OVERHEAD_ROUNDS = Math.max(2, Number(process.env.INFERLAB_BENCH_OVERHEAD_ROUNDS) || 3);

/** A per-round figure's interval, and the rounds a ±0.5 ms interval would take at its spread. */
function describeRounds(perRound: number[]): string {
  const interval = roundsInterval(perRound);
  if (!interval) return '';
  return (
    `mean ${interval.mean.toFixed(2)} ms, 95 % CI [${interval.low.toFixed(2)}, ${interval.high.toFixed(2)}], ` +
    `sd ${interval.sd.toFixed(2)}: ±0.5 ms takes ${roundsForHalfWidth(interval.sd, 0.5)} rounds`
  );
}

async function clientOverhead(): Promise<void> {
  const { engine } = await locateEngine();
  if (!engine) {
    rows.push({ figure: 'client overhead', value: 'skipped: no llama-server (run ./bin/inferlab setup)', target: '' });
    return;
  }
  const server = await startManagedBenchServer(engine, 'demo:q4_k_m', { ...defaultProfile(), parallelSlots: 32, contextSize: 32 * 256 });
  const { headers } = server;
  try {
    const body = { messages: [{ role: 'user', content: 'Count to ten.' }], max_tokens: 16, temperature: 0, ignore_eos: true };
    for (const concurrency of [1, 32]) {
      const agent = createKeepAliveAgent(concurrency + 4);
      const ours: number[] = [];
      const minimal: number[] = [];
      const roundDifferences: number[] = [];
      const roundPairedMedians: number[] = [];
      const perClient = 200;
      for (let round = 0; round < OVERHEAD_ROUNDS; round++) {
        const [oursBefore, minimalBefore] = [ours.length, minimal.length];
        const pairDifferences: number[] = [];
        await Promise.all(
          Array.from({ length: concurrency }, async (_, worker) => {
            const sendOurs = async () => {
              const overhead = deriveRequestMetrics(
                await streamCompletion({ baseUrl: server.baseUrl, headers, body, agent }),
              ).client_overhead_ms;
              if (overhead !== null) ours.push(overhead);
              return overhead;
            };
            const sendMinimal = async () => {
              const raw = await minimalRequest(server.baseUrl, headers, { ...body, stream_options: { include_usage: true } });
              if (raw !== null) minimal.push(raw);
              return raw;
            };
            for (let i = 0; i < Math.ceil(perClient / concurrency); i++) {
              // Which client goes first alternates by worker and by turn: with every worker starting on the same
              // client, that client's requests arrive in bursts and wait for each other's prefill.
              const oursFirst = (worker + i + round) % 2 === 0;
              const [first, second] = oursFirst ? [sendOurs, sendMinimal] : [sendMinimal, sendOurs];
              const [firstValue, secondValue] = [await first(), await second()];
              const [oursValue, minimalValue] = oursFirst ? [firstValue, secondValue] : [secondValue, firstValue];
              if (oursValue !== null && minimalValue !== null) pairDifferences.push(oursValue - minimalValue);
            }
          }),
        );
        const roundP50 = (values: number[], from: number) => summarize(values.slice(from)).p50;
        const [oursRound, minimalRound] = [roundP50(ours, oursBefore), roundP50(minimal, minimalBefore)];
        if (oursRound !== null && minimalRound !== null) roundDifferences.push(oursRound - minimalRound);
        const pairedMedian = roundPairedMedian(pairDifferences);
        if (pairedMedian !== null) roundPairedMedians.push(pairedMedian);
      }
      agent.destroy();
      const a = summarize(ours).p50;
      const b = summarize(minimal).p50;
      const listed = (values: number[]) => (values.length > 12 ? '' : `${values.map((value) => value.toFixed(2)).join(', ')}; `);
      rows.push({
        figure: `client_overhead_ms p50, concurrency ${concurrency} (Infer Lab / minimal client, n=${ours.length}/${minimal.length}, ${OVERHEAD_ROUNDS} rounds)`,
        value: `${fmt(a)} / ${fmt(b)}  (difference ${fmt(a !== null && b !== null ? a - b : null)}; per round ${listed(roundDifferences)}${describeRounds(roundDifferences)})`,
        target: 'Infer Lab adds ≤ 0.5 ms',
      });
      rows.push({
        figure: `  the same pairs, each round's median of paired differences (Infer Lab − the minimal client sent beside it)`,
        value: `${listed(roundPairedMedians)}${describeRounds(roundPairedMedians)}`,
        target: 'interval within +0.5 ms',
      });
    }
    rows.push(await pythonReferenceRow(server.baseUrl, headers, body));
    // Single-stream decode through the server next to llama-bench on the same model and threads.
    const decode: number[] = [];
    const decodeAgent = createKeepAliveAgent(2);
    for (let i = 0; i < 10; i++) {
      const completion = await streamCompletion({
        baseUrl: server.baseUrl,
        headers,
        agent: decodeAgent,
        body: { messages: [{ role: 'user', content: 'Write.' }], max_tokens: 128, temperature: 0, ignore_eos: true },
      });
      if (completion.timings && completion.timings.predicted_ms > 0)
        decode.push((completion.timings.predicted_n / completion.timings.predicted_ms) * 1000);
    }
    decodeAgent.destroy();
    const benchBinary = toolPath(engine, 'llama-bench');
    let reference = 'llama-bench not found';
    if (benchBinary) {
      const bench = await runToCompletion(benchBinary, [
        '-m',
        await resolveModelRef('demo:q4_k_m'),
        '-p',
        '0',
        '-n',
        '128',
        '-t',
        String(defaultProfile().threads),
        '-r',
        '5',
        '-o',
        'json',
      ]);
      try {
        const parsed = JSON.parse(bench.output.slice(bench.output.indexOf('['))) as { avg_ts: number; stddev_ts: number }[];
        reference = `${parsed[0]!.avg_ts.toFixed(1)} ± ${parsed[0]!.stddev_ts.toFixed(1)} tok/s`;
      } catch {
        reference = 'llama-bench output not understood';
      }
    }
    rows.push({
      figure: `single-stream decode, demo:q4_k_m, ${defaultProfile().threads} threads (server timings p50 / llama-bench tg128)`,
      value: `${summarize(decode).p50?.toFixed(1)} tok/s / ${reference}`,
      target: 'same order',
    });

    // Sampler cost: every sampler this machine has, at 4 Hz, for 10 s against the idle server.
    const origin = performance.now();
    const session = new TelemetrySession({
      clock: () => performance.now() - origin,
      serverPid: server.pid,
      metricsUrl: `${server.baseUrl}/metrics`,
      metricsHeaders: headers,
      intervalMs: 250,
    });
    session.start();
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    await session.stop();
    const telemetry = session.summary();
    rows.push({
      figure: `sampler overhead at 4 Hz (${telemetry.gpu_unavailable_reason ? 'process + /metrics; no nvidia-smi here' : 'nvidia-smi + process + /metrics'})`,
      value: `${telemetry.sampler.cpu_pct.toFixed(3)} % of one core`,
      target: '< 1 %',
    });
  } finally {
    await server.dispose();
  }
}

async function generatorSlip(): Promise<void> {
  // An SSE endpoint that answers at once: measuring the client needs a server faster than the client.
  const chunk =
    'data: {"choices":[{"delta":{"content":"x"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}\n\ndata: [DONE]\n\n';
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
    load: { mode: 'open', rate, burstiness: 1, maxOutstanding: 256 },
    stop: { requests: 5000, durationMs: null },
    warmup: 0,
    halt: new AbortController().signal,
    send: async (_index, _warmup, scheduledAt) => {
      const completion = await streamCompletion({ baseUrl, body: { messages: [] }, agent });
      slips.push(completion.t0 - scheduledAt!);
      return true;
    },
  });
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();
  server.close();
  const slip = summarize(slips);
  rows.push({
    figure: `open-loop generator at ${rate} req/s offered (5000 requests), p50 / p99 slip`,
    value: `${fmt(slip.p50)} / ${fmt(slip.p99)}; achieved ${(slips.length / elapsed).toFixed(1)} req/s`,
    target: 'p99 slip < 5 ms',
  });
}

/** The cost of running a user regex on the worker that bounds it (docs/SECURITY.md, "Bounded user regexes"). */
async function regexCheckOverhead(): Promise<void> {
  const rounds = 2000;
  const check = (i: number) => [[{ regex: `^The ${i % 7}` }], `The ${i % 7} capital`, null] as const;
  // The worker's first start is not part of a check's cost.
  await evaluateAcceptanceAsync(...check(0));
  let started = performance.now();
  for (let i = 0; i < rounds; i++) evaluateAcceptance(...check(i));
  const blockingUs = ((performance.now() - started) / rounds) * 1000;
  started = performance.now();
  for (let i = 0; i < rounds; i++) await evaluateAcceptanceAsync(...check(i));
  const awaitedUs = ((performance.now() - started) / rounds) * 1000;
  rows.push({
    figure: `acceptance regex check on the bounded worker (${rounds} checks), blocking / awaited`,
    value: `${fmt(blockingUs, 'µs', 0)} / ${fmt(awaitedUs, 'µs', 0)}`,
    target: 'well under 2 ms each',
  });
}

async function storeIngest(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inferlab-bench-'));
  const store = openAppStore(path.join(dir, 'ingest.db'), SAVED_PROFILE_RULES);
  try {
    const runId = createBareRun(store.runs, { kind: 'bench' });
    // Jittered gaps, as a real stream's are: identical gaps would make ordering them artificially cheap.
    const jitter = seededRandom(256);
    const offsetsOf = () => {
      let at = 10;
      return Array.from({ length: 256 }, () => (at += 1 + jitter() * (jitter() < 0.01 ? 40 : 1)));
    };
    const make = (seq: number): StoredRequest => ({
      seq,
      warmup: false,
      group: seq % 2 ? 'a' : 'b',
      itemId: `i${seq % 10}`,
      scheduledMs: null,
      t0Ms: seq * 2,
      headersMs: 1,
      endMs: seq * 2 + 400,
      metrics: {
        ttft_ms: 10 + (seq % 7),
        e2e_ms: 400,
        tpot_ms: 1.5,
        itl_ms: [],
        output_tokens: 256,
        output_tokens_source: 'usage',
        queue_ms: 1,
        client_overhead_ms: 0.3,
        decode_tokens_per_s: 600,
        ttfr_ms: null,
        ttfa_ms: null,
        ttft_from_schedule_ms: null,
        e2e_from_schedule_ms: null,
      },
      promptTokens: 64,
      usage: { prompt_tokens: 64, completion_tokens: 256, cached_tokens: 0 },
      finishReason: 'length',
      httpStatus: 200,
      errorClass: null,
      errorMessage: null,
      timings: { prompt_n: 64, prompt_ms: 8, predicted_n: 256, predicted_ms: 380, cache_n: 0, draft_n: null, draft_n_accepted: null },
      chunkOffsetsMs: offsetsOf(),
      accepted: null,
      promptText: 'p'.repeat(200),
      outputText: 'o'.repeat(1000),
    });
    const requests = Array.from({ length: 10_000 }, (_, seq) => make(seq));
    const ingestStart = performance.now();
    for (let i = 0; i < requests.length; i += 64) store.runs.addRequests(runId, requests.slice(i, i + 64));
    const ingest = performance.now() - ingestStart;
    const summaryStart = performance.now();
    const stored = store.runs.measuredRequests(runId);
    const readMs = performance.now() - summaryStart;
    const summary = summarizeRun({
      runId,
      status: 'completed',
      statusReason: null,
      workload: { name: null, revision: null },
      rows: stored,
      load: { mode: 'closed', concurrency: 64 },
      slo: null,
    });
    const summaryMs = performance.now() - summaryStart;
    rows.push({ figure: 'store 10,000 requests × 256 chunks (batches of 64)', value: fmt(ingest / 1000, 's', 2), target: '< 3 s' });
    rows.push({
      figure: `summarize that run (${summary.metrics.itl_ms.n} ITL samples): read back + summarize`,
      value: `${fmt(summaryMs / 1000, 's', 3)} (read ${fmt(readMs / 1000, 's', 3)})`,
      target: '≤ 0.3 s',
    });
  } finally {
    store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The Compare view with 20 runs × 10,000 requests, timed in Chromium from the click to the rendered table and chart. */
async function compareRender(): Promise<void> {
  const executable = chromiumPath();
  if (!executable) {
    rows.push({ figure: 'Compare view render', value: 'skipped: no Chromium (apt-get install -y chromium)', target: '≤ 0.5 s' });
    return;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inferlab-bench-'));
  const db = path.join(dir, 'compare.db');
  const store = openAppStore(db, SAVED_PROFILE_RULES);
  const random = seededRandom(3);
  for (let run = 0; run < 20; run++) {
    const runId = createBareRun(store.runs, { kind: 'bench', modelRef: `demo:bench-${run}` });
    const requests: StoredRequest[] = Array.from({ length: 10_000 }, (_, seq) =>
      storedRequest(seq, {
        group: 'g',
        itemId: 'i',
        t0Ms: seq,
        endMs: seq + 50,
        metrics: requestMetrics({
          ttft_ms: 20 + random() * 10 + run,
          e2e_ms: 50 + random() * 5,
          tpot_ms: 1 + random(),
          output_tokens: 16,
          queue_ms: 0,
          client_overhead_ms: 0.3,
          decode_tokens_per_s: 500,
        }),
        promptTokens: 8,
        finishReason: 'length',
      }),
    );
    for (let i = 0; i < requests.length; i += 500) store.runs.addRequests(runId, requests.slice(i, i + 500));
    store.runs.finishRun(
      runId,
      'completed',
      null,
      summarizeRun({
        runId,
        status: 'completed',
        statusReason: null,
        workload: { name: 'bench', revision: 'x' },
        rows: store.runs.measuredRequests(runId),
        load: { mode: 'closed', concurrency: 1 },
        slo: null,
      }),
    );
  }
  store.close();
  const { startServe } = await import('../test/support/serve');
  const serve = await startServe(['--db', db]);
  const browser = await launchBenchBrowser(executable);
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await page.goto(serve.url);
    await page.getByRole('button', { name: 'Runs', exact: true }).click();
    const boxes = page.getByTestId('runs-table').locator('tbody input[type=checkbox]');
    await boxes.first().waitFor();
    for (let i = 0; i < 20; i++) await boxes.nth(i).check();
    // Checked every frame: Playwright's waitFor polls at growing intervals (up to 500 ms apart), which would be timed instead of the page.
    const drawn = (selector: string) =>
      page.waitForFunction((wanted) => document.querySelector(wanted) !== null, selector, { polling: 'raf', timeout: 60_000 });
    const started = performance.now();
    await page.getByRole('button', { name: /Compare 20 selected/ }).click();
    await drawn('[data-testid="compare-table"]');
    const tableShown = performance.now() - started;
    await drawn('[role="img"][aria-label="compare-cdf"] canvas');
    const elapsed = performance.now() - started;
    rows.push({
      figure: 'Compare view, 20 runs × 10,000 requests (click → table and CDF drawn, Chromium)',
      value: `${fmt(elapsed / 1000, 's', 2)} (table at ${fmt(tableShown / 1000, 's', 2)})`,
      target: '≤ 0.5 s',
    });
  } finally {
    await browser.close();
    await serve.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The live timeline's memory over two simulated hours at 4 Hz: the ring buffer must keep it flat. */
async function liveTimelineMemory(): Promise<void> {
  const { useAppStore, TELEMETRY_CAPACITY } = await import('../src/renderer/src/state/store');
  const gc = (globalThis as { gc?: () => void }).gc;
  const heap = () => {
    gc?.();
    return process.memoryUsage().heapUsed;
  };
  const store = useAppStore.getState();
  store.startJob('bench');
  const tick = (t: number) => ({
    t,
    gpus: [
      {
        t,
        index: 0,
        uuid: 'GPU-0',
        name: 'bench',
        memoryUsedMib: 5000 + (t % 100),
        memoryTotalMib: 24564,
        utilizationPct: 80,
        memoryUtilizationPct: 40,
        temperatureC: 60,
        powerW: 250,
        smClockMhz: 2500,
        pstate: 'P2',
      },
    ],
    serverProcess: { t, cpuPct: 150, rssBytes: 7e7 },
    serverVramMib: 812,
  });
  const hour = 4 * 3600;
  for (let i = 0; i < hour; i++) useAppStore.getState().applyTelemetry('bench', tick(i * 250));
  const afterOne = heap();
  for (let i = hour; i < 2 * hour; i++) useAppStore.getState().applyTelemetry('bench', tick(i * 250));
  const afterTwo = heap();
  const kept = useAppStore.getState().live.telemetry.length;
  rows.push({
    figure: `live timeline at 4 Hz: points kept and heap after 1 h → 2 h${gc ? '' : ' (no --expose-gc: heap is noisy)'}`,
    value: `${kept} of ${TELEMETRY_CAPACITY}; ${(afterOne / 2 ** 20).toFixed(1)} → ${(afterTwo / 2 ** 20).toFixed(1)} MiB`,
    target: 'flat',
  });
}

/** Start-up of the CLI as installed (compiled, built by npm ci): median of 7 runs after one warm-up. */
async function cliStartup(): Promise<void> {
  const root = path.dirname(path.dirname(new URL(import.meta.url).pathname));
  const built = path.join(root, 'out', 'cli', 'cli.mjs');
  if (!fs.existsSync(built)) {
    rows.push({ figure: 'CLI start-up', value: 'not built (npm run build)', target: '' });
    return;
  }
  const db = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'inferlab-bench-')), 'startup.db');
  const time = async (args: string[]) => {
    const times: number[] = [];
    for (let i = 0; i < 8; i++) {
      const started = performance.now();
      const result = await runToCompletion(process.execPath, [path.join(root, 'bin', 'inferlab'), ...args], { timeoutMs: 30_000 });
      if (result.code !== 0) throw new Error(`inferlab ${args.join(' ')} failed: ${result.output}`);
      if (i > 0) times.push(performance.now() - started);
    }
    return times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
  };
  const bare = await (async () => {
    const times: number[] = [];
    for (let i = 0; i < 8; i++) {
      const started = performance.now();
      await runToCompletion(process.execPath, ['-e', '0'], { timeoutMs: 30_000 });
      if (i > 0) times.push(performance.now() - started);
    }
    return times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
  })();
  rows.push({ figure: 'start-up: node -e 0 (the floor)', value: fmt(bare, 'ms', 0), target: '' });
  rows.push({ figure: 'start-up: inferlab --help', value: fmt(await time(['--help']), 'ms', 0), target: '< 150 ms' });
  rows.push({
    figure: 'start-up: inferlab runs list (empty database)',
    value: fmt(await time(['runs', 'list', '--db', db]), 'ms', 0),
    target: '< 300 ms',
  });
}

/**
 * What the UI's first paint downloads: the scripts and preloads index.html names (the shell and
 * the libraries every view shares); views and ECharts are chunks loaded when first opened.
 */
function uiInitialJavaScript(): void {
  const root = path.dirname(path.dirname(new URL(import.meta.url).pathname));
  const renderer = path.join(root, 'out', 'renderer');
  const index = path.join(renderer, 'index.html');
  if (!fs.existsSync(index)) {
    rows.push({ figure: 'UI initial JavaScript', value: 'not built (npm run build)', target: '' });
    return;
  }
  const html = fs.readFileSync(index, 'utf8');
  const named = [...html.matchAll(/(?:src|href)="\.?\/?([^"]+\.js)"/g)].map((match) => match[1]!);
  const bytes = named.reduce((sum, file) => sum + fs.statSync(path.join(renderer, file)).size, 0);
  const chunks = fs.readdirSync(path.join(renderer, 'assets')).filter((file) => file.endsWith('.js'));
  const largest = chunks
    .filter((file) => !named.some((entry) => entry.endsWith(file)))
    .map((file) => ({ file, size: fs.statSync(path.join(renderer, 'assets', file)).size }))
    .sort((a, b) => b.size - a.size)[0];
  rows.push({
    figure: `UI initial JavaScript (${named.length} file(s) index.html loads)`,
    value: fmt(bytes / 1000, 'KB', 0),
    target: '≤ 700 KB',
  });
  if (largest)
    rows.push({
      figure: `UI largest chunk loaded on demand (${largest.file.replace(/-[\w-]+\.js$/, '')})`,
      value: fmt(largest.size / 1000, 'KB', 0),
      target: '',
    });
}

/**
 * Engine setup time per route, as each build recorded it (a fresh build takes minutes, so the
 * bench reads the records rather than rebuilding; `INFERLAB_CACHE_DIR=$(mktemp -d) inferlab
 * setup [--from-source]` measures one afresh).
 */
function engineSetupTimes(): void {
  const times: Record<string, number> = {};
  for (const backend of ENGINE_BACKENDS) {
    for (const route of ['prebuilt', 'source'] as const) {
      const build = findCachedBuild(engineCacheDir(), backend, route);
      if (!build) continue;
      times[route] = build.buildSeconds;
      rows.push({
        figure: `engine build, ${route === 'prebuilt' ? 'on prebuilt libraries' : 'all from source'} (${backend}; its record, ${build.builtAt.slice(0, 10)})`,
        value: fmt(build.buildSeconds, 's', 0),
        target: route === 'prebuilt' ? 'well under half the source build' : '',
      });
    }
  }
  if (Object.keys(times).length === 0)
    rows.push({ figure: 'engine build', value: 'no build recorded (run ./bin/inferlab setup)', target: '' });
}

async function main(): Promise<void> {
  process.stderr.write(
    `Infer Lab benchmarks on ${os.cpus()[0]?.model ?? 'unknown CPU'} (${os.availableParallelism()} cores), Node ${process.version}\n`,
  );
  // `npm run bench -- compare scale` runs only the steps named; no names, every step.
  const steps: Record<string, () => void | Promise<void>> = {
    build: engineSetupTimes,
    ui: uiInitialJavaScript,
    startup: cliStartup,
    store: storeIngest,
    slip: generatorSlip,
    scale: async () => void rows.push(...(await streamsAtScale())),
    long: async () => void rows.push(...(await longContexts())),
    regex: regexCheckOverhead,
    overhead: clientOverhead,
    client: async () => void rows.push(...(await clientOnlyOverhead())),
    resolve: async () => void rows.push(...(await workloadResolveTimes())),
    compare: compareRender,
    intervals: () => void rows.push(...compareIntervals()),
    'runs-view': async () => void rows.push(...(await runsFirstPaint())),
    timeline: liveTimelineMemory,
    embeddings: async () => void rows.push(...(await embeddingsThroughput())),
    race: async () => void rows.push(...(await raceFidelity())),
  };
  const asked = process.argv.slice(2);
  const unknown = asked.filter((name) => !(name in steps));
  if (unknown.length > 0) {
    process.stderr.write(`unknown bench step ${unknown.join(', ')}: the steps are ${Object.keys(steps).join(', ')}\n`);
    process.exit(2);
  }
  for (const [name, step] of Object.entries(steps)) if (asked.length === 0 || asked.includes(name)) await step();
  const width = Math.max(...rows.map((row) => row.figure.length));
  const valueWidth = Math.max(...rows.map((row) => row.value.length));
  process.stdout.write(`${'figure'.padEnd(width)}  ${'value'.padEnd(valueWidth)}  target\n`);
  for (const row of rows) process.stdout.write(`${row.figure.padEnd(width)}  ${row.value.padEnd(valueWidth)}  ${row.target}\n`);
}

await main();
