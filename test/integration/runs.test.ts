import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { defaultProfile } from '../../src/main/engines/llamacpp/launch-args';
import { resolveModelRef } from '../../src/main/models/demo-models';
import { runWorkload } from '../../src/main/runner/run-workload';
import { textOfTokens } from '../../src/main/workload/generators';
import { seededRandom } from '../../src/main/models/random';
import { readWorkloadFile, workloadPath } from '../../src/main/workload/parse-workload';
import { llamaServerTokenCounter } from '../../src/main/workload/token-counter';
import { inferlab, startInferlab } from '../support/cli';
import { requireEngine } from '../support/engine';
import { serverHarness } from '../support/servers';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();
const METRICS = ['ttft_ms', 'tpot_ms', 'itl_ms', 'e2e_ms', 'queue_ms', 'client_overhead_ms'];

describe('inferlab run against the real llama-server', () => {
  it('runs chat-short at concurrency 4 with every summary number filled, and exports it', async () => {
    const dir = tempDir();
    const db = path.join(dir, 'runs.db');
    const result = await inferlab(['run', '--workload', 'chat-short', '--model', 'demo:q8_0', '--requests', '40', '--concurrency', '4', '--db', db, '--json']);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary.status).toBe('completed');
    expect(summary.requests).toMatchObject({ attempted: 40, completed: 40, failed: 0, failures_by_class: {} });
    for (const name of METRICS) {
      const distribution = summary.metrics[name];
      expect(Object.keys(distribution).sort(), name).toEqual(['max', 'mean', 'min', 'n', 'p50', 'p90', 'p95', 'p99', 'std']);
      for (const value of Object.values(distribution)) expect(value, name).toEqual(expect.any(Number));
    }
    expect(summary.throughput).toEqual({ requests_per_s: expect.any(Number), output_tokens_per_s: expect.any(Number), total_tokens_per_s: expect.any(Number), output_tokens_total: expect.any(Number) });
    expect(summary.goodput.requests_per_s).toEqual(expect.any(Number));
    expect(Object.keys(summary.groups).sort()).toEqual(['chat', 'facts']);
    expect(summary.load).toMatchObject({ mode: 'closed', concurrency: 4, achieved: expect.any(Number) });

    const out = path.join(dir, 'export');
    const exported = await inferlab(['export', summary.run_id.slice(0, 8), '--out', out, '--db', db]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(fs.readdirSync(out).sort()).toEqual(['manifest.json', 'requests.csv', 'requests.jsonl', 'summary.json', 'telemetry.json']);
    const telemetry = JSON.parse(fs.readFileSync(path.join(out, 'telemetry.json'), 'utf8'));
    expect(telemetry.series.map((entry: { series: string }) => entry.series)).toEqual(expect.arrayContaining(['server.cpu', 'server.rss', 'metrics.predicted_tokens_total']));
    expect(JSON.parse(fs.readFileSync(path.join(out, 'summary.json'), 'utf8'))).toEqual(summary);
    const lines = fs.readFileSync(path.join(out, 'requests.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    expect(lines).toHaveLength(40);
    expect(lines[0]).toMatchObject({ warmup: false, group: 'facts', item_id: 'capital-france', finish_reason: expect.any(String), prompt: expect.any(String) });
    expect(lines[0].chunk_offsets_ms.length).toBeGreaterThan(0);
    const manifest = JSON.parse(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8'));
    expect(manifest.workload.revision).toBe(summary.workload.revision);
    expect(manifest.server.effectiveConfig.build).toMatch(/^b\d+/);
    expect(manifest.model.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(manifest.environment.cpu.cores).toBeGreaterThan(0);
    expect(fs.readFileSync(path.join(out, 'requests.csv'), 'utf8').split('\n')[0]).toMatch(/^seq,warmup,group,item_id/);

    const shown = await inferlab(['runs', 'show', summary.run_id, '--db', db, '--json']);
    expect(JSON.parse(shown.stdout).summary.run_id).toBe(summary.run_id);
    const listed = JSON.parse((await inferlab(['runs', 'list', '--db', db, '--json'])).stdout);
    expect(listed[0]).toMatchObject({ run_id: summary.run_id, status: 'completed', requests: 40 });
  });

  it('runs open loop with warmup, flags warmup in exports, and keeps private text out of the database', async () => {
    const dir = tempDir();
    const db = path.join(dir, 'open.db');
    const result = await inferlab(['run', '--workload', 'chat-short', '--model', 'demo:q4_k_m', '--rate', '20', '--requests', '16', '--warmup', '3', '--private', '--slo', 'ttft=2000,e2e=5000', '--db', db, '--json']);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary.warmup_requests).toBe(3);
    expect(summary.requests.attempted).toBe(16);
    expect(summary.load).toMatchObject({ mode: 'open', offered: 20, slip_ms_p99: expect.any(Number) });
    expect(summary.goodput.slo).toEqual({ ttft_ms: 2000, e2e_ms: 5000 });
    const out = path.join(dir, 'export');
    await inferlab(['export', summary.run_id, '--out', out, '--db', db]);
    const lines = fs.readFileSync(path.join(out, 'requests.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    expect(lines.filter((line) => line.warmup)).toHaveLength(3);
    expect(lines.every((line) => line.prompt === undefined && line.output === undefined && /^[0-9a-f]{64}$/.test(line.prompt_sha256))).toBe(true);
    const raw = new Database(db, { readonly: true });
    raw.pragma('wal_checkpoint(TRUNCATE)');
    raw.close();
    const bytes = fs.readFileSync(db);
    expect(bytes.includes(Buffer.from('capital of France'))).toBe(false);
  });

  it('generates prompts of exactly the requested token length with the server tokenizer', async () => {
    const harness = await serverHarness(tempDir());
    try {
      const server = await harness.servers.start({ modelRef: 'demo:q8_0', profile: { ...defaultProfile(), contextSize: 2048 } });
      const counter = llamaServerTokenCounter(server.baseUrl!);
      for (const target of [1, 37, 500]) {
        const generated = await textOfTokens(target, seededRandom(target), counter);
        expect(generated.exact, `target ${target}`).toBe(true);
        expect(await counter.count(generated.text)).toBe(target);
      }
    } finally {
      await harness.dispose();
    }
  });

  it('ends aborted with the reason when the server dies mid-run, keeping finished requests', async () => {
    const harness = await serverHarness(tempDir());
    let serverPid: number | null = null;
    harness.servers.changes.on((snapshot) => {
      if (snapshot.state === 'ready') serverPid = snapshot.pid;
    });
    let killed = false;
    try {
      const { summary } = await runWorkload({
        request: {
          workload: { def: readWorkloadFile(workloadPath('decode-heavy')), file: workloadPath('decode-heavy') },
          target: { kind: 'model', modelRef: 'demo:q4_k_m', modelPath: await resolveModelRef('demo:q4_k_m'), profile: { ...defaultProfile(), parallelSlots: 2 } },
          load: { mode: 'closed', concurrency: 2 }, stop: { requests: 40, durationMs: null }, warmup: 0, slo: null,
          timeouts: { firstTokenMs: 30_000, totalMs: 60_000 }, private: false, referenceRunId: null,
        },
        store: harness.store.runs, servers: harness.servers, engine: requireEngine,
        onProgress: (progress) => {
          if (!killed && progress.finished >= 3 && serverPid) {
            killed = true;
            process.kill(serverPid, 'SIGKILL');
          }
        },
      });
      expect(summary.status).toBe('aborted');
      expect(summary.status_reason).toMatch(/the server crashed/);
      expect(summary.requests.completed).toBeGreaterThanOrEqual(3);
      expect(summary.requests.failed).toBeGreaterThanOrEqual(1);
      expect(summary.requests.attempted).toBeLessThan(40);
      expect(harness.store.runs.countRequests(summary.run_id)).toBe(summary.requests.attempted);
    } finally {
      await harness.dispose();
    }
  });

  it('SIGINT ends the run interrupted, stops the server and leaves a consistent database', async () => {
    const dir = tempDir();
    const db = path.join(dir, 'sigint.db');
    const child = startInferlab(['run', '--workload', 'decode-heavy', '--model', 'demo:q8_0', '--requests', '200', '--db', db, '--json']);
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    // Wait until some requests are stored, then interrupt.
    for (let i = 0; i < 200; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      if (!fs.existsSync(db)) continue;
      const probe = new Database(db, { readonly: true, fileMustExist: true });
      const stored = (probe.prepare("SELECT COUNT(*) AS n FROM sqlite_master WHERE name = 'requests'").get() as { n: number }).n
        ? (probe.prepare('SELECT COUNT(*) AS n FROM requests').get() as { n: number }).n : 0;
      probe.close();
      if (stored >= 2) break;
    }
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    const summary = JSON.parse(stdout);
    expect(summary.status).toBe('interrupted');
    const check = new Database(db, { readonly: true });
    expect(check.pragma('integrity_check', { simple: true })).toBe('ok');
    expect((check.prepare('SELECT COUNT(*) AS n FROM requests').get() as { n: number }).n).toBe(summary.requests.attempted);
    const sessions = check.prepare('SELECT pid, ended_at FROM server_sessions').all() as { pid: number; ended_at: string | null }[];
    check.close();
    expect(sessions.every((session) => session.ended_at !== null)).toBe(true);
    for (const session of sessions) expect(() => process.kill(session.pid, 0)).toThrow();
  });

  it('points the same workload at an OpenAI-compatible endpoint', async () => {
    const harness = await serverHarness(tempDir());
    try {
      const server = await harness.servers.start({ modelRef: 'demo:q4_k_m', profile: defaultProfile() });
      const db = path.join(tempDir(), 'endpoint.db');
      const result = await inferlab(['run', '--workload', 'chat-short', '--endpoint', `${server.baseUrl}/v1`, '--requests', '8', '--concurrency', '2', '--db', db, '--json']);
      expect(result.code, result.stderr).toBe(0);
      const summary = JSON.parse(result.stdout);
      expect(summary.requests.completed).toBe(8);
      expect(summary.metrics.ttft_ms.n).toBe(8);
    } finally {
      await harness.dispose();
    }
  });

  it.each([
    [['--concurrency', '0'], /--concurrency must be a positive integer, got "0"/],
    [['--concurrency', '-2'], /--concurrency must be a positive integer, got "-2"/],
    [['--rate', 'abc'], /--rate must be a positive number, got "abc"/],
    [['--requests', '0'], /--requests must be a positive integer, got "0"/],
    [['--concurrency', '2', '--rate', '5'], /exclude each other/],
    [['--slo', 'ttft=fast'], /--slo ttft must be a positive number/],
    [['--warmup', '-1'], /--warmup must be a whole number/],
  ])('exits 2 with usage for %j and writes nothing', async (extra, message) => {
    const db = path.join(tempDir(), 'never.db');
    const result = await inferlab(['run', '--workload', 'chat-short', '--model', 'demo:q8_0', ...extra, '--db', db]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toMatch(/Usage: inferlab run/);
    expect(fs.existsSync(db)).toBe(false);
  });

  it('refuses a bad workload file and max_tokens beyond the context before storing anything', async () => {
    const dir = tempDir();
    const db = path.join(dir, 'runs.db');
    fs.writeFileSync(path.join(dir, 'bad.yaml'), 'name: bad\ngroups:\n  - name: g\n    items:\n      - id: a\n        prompt: x\n        temprature: 0\n');
    const bad = await inferlab(['run', '--workload', path.join(dir, 'bad.yaml'), '--model', 'demo:q8_0', '--db', db]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/bad\.yaml:7:9: groups\[0\]\.items\[0\]\.temprature: unknown field/);
    expect(fs.existsSync(db)).toBe(false);

    fs.writeFileSync(path.join(dir, 'long.yaml'), 'name: long\ngroups:\n  - name: g\n    items:\n      - id: too-long\n        prompt: x\n        max_tokens: 5000\n');
    const long = await inferlab(['run', '--workload', path.join(dir, 'long.yaml'), '--model', 'demo:q8_0', '--set', 'c=1024', '--db', db]);
    expect(long.code).toBe(2);
    expect(long.stderr).toMatch(/long\.yaml: max_tokens beyond the server's context of 1024 tokens per request for too-long/);
    const check = new Database(db, { readonly: true });
    expect((check.prepare('SELECT COUNT(*) AS n FROM runs').get() as { n: number }).n).toBe(0);
    check.close();
  });
});
