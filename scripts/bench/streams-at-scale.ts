/**
 * Issue goal "scale on one machine": closed loop at 5,000 concurrent streams against the SSE load
 * target (scripts/bench/sse-load-target.ts), `inferlab run --endpoint` beside the minimal client
 * (scripts/bench/minimal-stream-client.ts), alternating, each in a process of its own.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import type { RunSummary } from '../../src/shared/contract/runs';
import type { BenchRow } from './bench-row';

const here = path.dirname(new URL(import.meta.url).pathname);
const root = path.resolve(here, '..', '..');
const CONCURRENCY = 5000;
const REQUESTS = 25_000;
const ROUNDS = 2;

function startTarget(): Promise<{ url: string; stop(): void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'sse-load-target.ts'), '8', '250'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    readline.createInterface({ input: child.stdout! }).once('line', (url) => resolve({ url, stop: () => child.kill('SIGTERM') }));
  });
}

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

async function minimalClient(url: string): Promise<number> {
  const out = await runProcess(process.execPath, [
    '--import',
    'tsx',
    path.join(here, 'minimal-stream-client.ts'),
    url,
    String(CONCURRENCY),
    String(REQUESTS),
  ]);
  const result = JSON.parse(out) as { completed: number; requests_per_s: number };
  if (result.completed !== REQUESTS) throw new Error(`the minimal client completed ${result.completed} of ${REQUESTS}`);
  return result.requests_per_s;
}

async function inferlabClient(url: string, dir: string, round: number): Promise<RunSummary> {
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
      '--concurrency',
      String(CONCURRENCY),
      '--requests',
      String(REQUESTS),
      '--warmup',
      '0',
      '--db',
      path.join(dir, `scale-${round}.db`),
      '--json',
    ],
    { ...process.env, INFERLAB_DATA_DIR: dir },
  );
  return JSON.parse(out) as RunSummary;
}

export async function streamsAtScale(): Promise<BenchRow[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inferlab-scale-'));
  const target = await startTarget();
  const minimal: number[] = [];
  const inferlab: RunSummary[] = [];
  try {
    for (let round = 0; round < ROUNDS; round += 1) {
      minimal.push(await minimalClient(target.url));
      inferlab.push(await inferlabClient(target.url, dir, round));
    }
  } finally {
    target.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const ratios = inferlab.map((summary, round) => (summary.throughput.requests_per_s ?? 0) / minimal[round]!);
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
      value: `${inferlab.map((summary) => (summary.throughput.requests_per_s ?? 0).toFixed(0)).join(', ')} / ${minimal.map((rate) => rate.toFixed(0)).join(', ')} (ratio ${ratios.map((ratio) => ratio.toFixed(2)).join(', ')})`,
      target: 'ratio ≥ 0.9',
    },
    {
      figure: `  that run: completed, client_bound, the client's loop`,
      value: `${completed}; ${inferlab.map((summary) => summary.load.client_bound).join(', ')}; ${loops}`,
      target: 'marked when behind',
    },
  ];
}
