/**
 * Issue goal "scale on one machine": closed loop at 5,000 concurrent streams against the SSE load
 * target (scripts/bench/sse-load-target.ts), `inferlab run --endpoint` beside the minimal client
 * (scripts/bench/minimal-stream-client.ts), alternating, each in a process of its own.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RunSummary } from '../../src/shared/contract/runs';
import type { BenchRow } from './bench-row';
import { startLoadTarget } from './bench-processes';

const here = path.dirname(new URL(import.meta.url).pathname);
const root = path.resolve(here, '..', '..');
const CONCURRENCY = 5000;
const REQUESTS = 25_000;
const ROUNDS = 2;
const TOKENS = 8;
const OPEN_RATE = 2000;
const OPEN_REQUESTS = 20_000;
/** Stream shards for the sharded open-loop row: one per core the load target leaves, at least two. */
const OPEN_SHARDS = Math.max(2, os.availableParallelism() - 1);

function runProcess(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
  return new Promise((resolve, reject) =>
    child.on('close', (code) =>
      code === 0 ? resolve(stdout) : reject(new Error(`${path.basename(args[0] ?? command)} exited ${code}: ${stderr.slice(-500)}`)),
    ),
  );
}

interface MinimalResult {
  completed: number;
  requests_per_s: number;
  cpu_ms: number;
}

async function minimalClient(url: string): Promise<MinimalResult> {
  const out = await runProcess(process.execPath, [
    '--import',
    'tsx',
    path.join(here, 'minimal-stream-client.ts'),
    url,
    String(CONCURRENCY),
    String(REQUESTS),
  ]);
  const result = JSON.parse(out) as MinimalResult;
  if (result.completed !== REQUESTS) throw new Error(`the minimal client completed ${result.completed} of ${REQUESTS}`);
  return result;
}

/** Every event either client parses per request: the tokens, then usage and [DONE] with the last. */
const EVENTS_PER_REQUEST = TOKENS + 1;
const microsPerEvent = (cpuMs: number, requests: number) => (cpuMs * 1000) / (requests * EVENTS_PER_REQUEST);
const inferlabCpuMs = (summary: RunSummary) => (summary.load.client ? summary.load.client.cpu_cores * summary.load.client.window_ms : NaN);

async function inferlabClient(url: string, dir: string, name: string, load: string[]): Promise<RunSummary> {
  const workload = path.join(dir, 'load-target.yaml');
  fs.writeFileSync(
    workload,
    'name: load-target\ndefaults:\n  max_tokens: 8\ngroups:\n  - name: g\n    items:\n      - id: hi\n        messages: [{ role: user, content: "hi" }]\n',
  );
  const out = await runProcess(
    process.execPath,
    [
      path.join(root, 'bin', 'inferlab'),
      'run',
      '--workload',
      workload,
      '--endpoint',
      url,
      ...load,
      '--warmup',
      '0',
      '--db',
      path.join(dir, `${name}.db`),
      '--json',
    ],
    { ...process.env, INFERLAB_DATA_DIR: dir },
  );
  return JSON.parse(out) as RunSummary;
}

export async function streamsAtScale(): Promise<BenchRow[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inferlab-scale-'));
  const target = await startLoadTarget(TOKENS, 250);
  const minimal: MinimalResult[] = [];
  const inferlab: RunSummary[] = [];
  let open: RunSummary;
  let sharded: RunSummary;
  try {
    for (let round = 0; round < ROUNDS; round += 1) {
      minimal.push(await minimalClient(target.url));
      inferlab.push(
        await inferlabClient(target.url, dir, `closed-${round}`, ['--concurrency', String(CONCURRENCY), '--requests', String(REQUESTS)]),
      );
    }
    const openLoad = ['--rate', String(OPEN_RATE), '--max-outstanding', String(3 * CONCURRENCY), '--requests', String(OPEN_REQUESTS)];
    open = await inferlabClient(target.url, dir, 'open', openLoad);
    sharded = await inferlabClient(target.url, dir, 'open-sharded', [...openLoad, '--shards', String(OPEN_SHARDS)]);
  } finally {
    target.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const ratios = inferlab.map((summary, round) => (summary.throughput.requests_per_s ?? 0) / minimal[round]!.requests_per_s);
  const cpuRatios = inferlab.map(
    (summary, round) =>
      microsPerEvent(inferlabCpuMs(summary), summary.requests.completed) / microsPerEvent(minimal[round]!.cpu_ms, REQUESTS),
  );
  const completed = inferlab.map((summary) => `${summary.requests.completed}/${REQUESTS}`).join(', ');
  const loops = inferlab
    .map((summary) =>
      summary.load.client
        ? `${(summary.load.client.loop_utilization * 100).toFixed(0)} % busy, p99 delay ${summary.load.client.loop_delay_ms_p99?.toFixed(0) ?? '—'} ms`
        : '—',
    )
    .join('; ');
  return [
    {
      figure: `closed loop, ${CONCURRENCY} streams × ${REQUESTS} requests, load target (8 tokens, 1 per 250 ms): Infer Lab / minimal client req/s`,
      value: `${inferlab.map((summary) => (summary.throughput.requests_per_s ?? 0).toFixed(0)).join(', ')} / ${minimal.map((result) => result.requests_per_s.toFixed(0)).join(', ')} (ratio ${ratios.map((ratio) => ratio.toFixed(2)).join(', ')})`,
      target: 'ratio ≥ 0.9',
    },
    {
      figure: '  CPU per streamed event, whole process (Infer Lab / minimal client)',
      value: `${inferlab.map((summary) => microsPerEvent(inferlabCpuMs(summary), summary.requests.completed).toFixed(1)).join(', ')} µs / ${minimal.map((result) => microsPerEvent(result.cpu_ms, REQUESTS).toFixed(1)).join(', ')} µs (ratio ${cpuRatios.map((ratio) => ratio.toFixed(2)).join(', ')})`,
      target: 'ratio ≤ 1.5',
    },
    {
      figure: `  that run: completed, client_bound, the client's loop`,
      value: `${completed}; ${inferlab.map((summary) => summary.load.client_bound).join(', ')}; ${loops}`,
      target: 'marked when behind',
    },
    openLoopRow(`open loop, ${OPEN_RATE} req/s offered (Poisson, ${OPEN_REQUESTS} requests), same target, one loop`, open),
    openLoopRow(`  the same over ${OPEN_SHARDS} stream shards (worker threads; ${os.availableParallelism()} cores here)`, sharded),
    {
      figure: '  each shard: requests, loop busy, p99 timer delay, p99 slip',
      value:
        sharded.load.client?.shards
          ?.map(
            (shard) =>
              `#${shard.shard} ${shard.requests}, ${(shard.loop_utilization * 100).toFixed(0)} %, ${shard.loop_delay_ms_p99?.toFixed(1) ?? '—'} ms, ${shard.slip_ms_p99?.toFixed(1) ?? '—'} ms`,
          )
          .join('; ') ?? '—',
      target: 'reported',
    },
  ];
}

function openLoopRow(figure: string, summary: RunSummary): BenchRow {
  const client = summary.load.client;
  return {
    figure: `${figure}: p99 slip, achieved, completed, client_bound, CPU`,
    value: `${summary.load.slip_ms_p99?.toFixed(2) ?? '—'} ms; ${(summary.load.achieved ?? 0).toFixed(0)} req/s; ${summary.requests.completed}/${OPEN_REQUESTS}; ${summary.load.client_bound}; ${client ? `${client.cpu_cores.toFixed(2)} cores, run loop ${(client.loop_utilization * 100).toFixed(0)} % busy` : '—'}`,
    target: 'p99 slip < 5 ms',
  };
}
