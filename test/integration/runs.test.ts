import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { defaultProfile } from '../../src/main/engines/llamacpp/launch-args';
import { resolveModelRef } from '../../src/main/models/demo-models';
import { runWorkload } from '../../src/main/runner/run-workload';
import { textOfTokens } from '../../src/main/workload/generators';
import { seededRandom } from '../../src/main/core/random';
import { readWorkloadFile, workloadPath } from '../../src/main/workload/parse-workload';
import { llamaServerTokenCounter } from '../../src/main/workload/token-counter';
import { inferlab, inferlabJson, startInferlab } from '../support/cli';
import { requireEngine } from '../support/engine';
import { serverHarness } from '../support/servers';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();
const METRICS = ['ttft_ms', 'tpot_ms', 'itl_ms', 'e2e_ms', 'queue_ms', 'client_overhead_ms'];

describe('inferlab run against the real llama-server', () => {
  it('runs chat-short at concurrency 4 with every summary number filled, and exports it', async () => {
    const dir = tempDir();
    const db = path.join(dir, 'runs.db');
    const summary = await inferlabJson(
      ['run', '--workload', 'chat-short', '--model', 'demo:q8_0', '--requests', '40', '--concurrency', '4'],
      db,
    );
    expect(summary.status).toBe('completed');
    expect(summary.requests).toMatchObject({ attempted: 40, completed: 40, failed: 0, failures_by_class: {} });
    for (const name of METRICS) {
      const distribution = summary.metrics[name];
      expect(Object.keys(distribution).sort(), name).toEqual(['max', 'mean', 'min', 'n', 'p50', 'p90', 'p95', 'p99', 'std', 'unsupported']);
      // Every value filled except the percentiles n cannot support, which are null and named.
      for (const [key, value] of Object.entries(distribution)) {
        if (key === 'unsupported') continue;
        expect(value, `${name}.${key}`).toEqual(distribution.unsupported.includes(key) ? null : expect.any(Number));
      }
    }
    // 40 requests: p95 is supported, p99 (n ≥ 100) is not; the pooled ITL has thousands of gaps.
    expect(summary.metrics.ttft_ms.unsupported).toEqual(['p99']);
    expect(summary.metrics.itl_ms.unsupported).toEqual([]);
    // The demo profile serves one slot: concurrency 4 waits for it, and the summary says so.
    expect(summary.measurement).toMatchObject({
      server_slots: 1,
      slot_wait_note: expect.stringMatching(/^concurrency 4 against 1 server slot: /),
    });
    expect(summary.reasoning).toBeNull();
    expect(summary.schedule_latency).toBeNull();
    // No item showed a picture: the summary has no images part, and so no images line, rather than one saying the log was silent.
    expect(summary).not.toHaveProperty('images');
    expect((await inferlab(['runs', 'show', summary.run_id, '--db', db])).stdout).not.toMatch(/^images:/m);
    expect(summary.throughput).toEqual({
      requests_per_s: expect.any(Number),
      output_tokens_per_s: expect.any(Number),
      total_tokens_per_s: expect.any(Number),
      output_tokens_total: expect.any(Number),
    });
    expect(summary.goodput.requests_per_s).toEqual(expect.any(Number));
    expect(Object.keys(summary.groups).sort()).toEqual(['chat', 'facts']);
    expect(summary.load).toMatchObject({ mode: 'closed', concurrency: 4, achieved: expect.any(Number) });

    const out = path.join(dir, 'export');
    const exported = await inferlab(['export', summary.run_id.slice(0, 8), '--out', out, '--db', db]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(fs.readdirSync(out).sort()).toEqual([
      'manifest.json',
      'requests.csv',
      'requests.jsonl',
      'summary.json',
      'telemetry.csv',
      'telemetry.json',
      'trace.jsonl',
    ]);
    // Chat prompts were tokenized through the server's template after the load: every measured request is in the trace.
    const trace = fs
      .readFileSync(path.join(out, 'trace.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { input_length: number; hash_ids: number[] });
    expect(trace).toHaveLength(summary.requests.attempted);
    for (const entry of trace) expect(entry.hash_ids).toHaveLength(Math.ceil(entry.input_length / 512));
    const telemetry = JSON.parse(fs.readFileSync(path.join(out, 'telemetry.json'), 'utf8'));
    expect(telemetry.series.map((entry: { series: string }) => entry.series)).toEqual(
      expect.arrayContaining(['server.cpu', 'server.rss', 'metrics.predicted_tokens_total']),
    );
    expect(JSON.parse(fs.readFileSync(path.join(out, 'summary.json'), 'utf8'))).toEqual(summary);
    const lines = fs
      .readFileSync(path.join(out, 'requests.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines).toHaveLength(40);
    expect(lines[0]).toMatchObject({
      warmup: false,
      group: 'facts',
      item_id: 'capital-france',
      finish_reason: expect.any(String),
      prompt: expect.any(String),
    });
    expect(lines[0].chunk_offsets_ms.length).toBeGreaterThan(0);
    for (const line of lines) {
      // e2e ends at the finish chunk, which follows the last content chunk; TPOT spans output_tokens − 1 steps.
      expect(line.e2e_ms).toBeGreaterThanOrEqual(line.chunk_offsets_ms.at(-1));
      expect(line.ttft_ms).toBe(line.chunk_offsets_ms[0]);
      expect(line.output_tokens_source).toBe('usage');
      if (line.output_tokens > 1) expect(line.tpot_ms).toBeCloseTo((line.e2e_ms - line.ttft_ms) / (line.output_tokens - 1), 9);
      else expect(line.tpot_ms).toBeNull();
      const timings = line.server_timings;
      if (timings.predicted_n > 1)
        expect(line.decode_tokens_per_s).toBeCloseTo(((timings.predicted_n - 1) / timings.predicted_ms) * 1000, 6);
      else expect(line.decode_tokens_per_s).toBeNull();
      expect(line.queue_ms).toBeCloseTo(Math.max(0, line.ttft_ms - timings.prompt_ms), 9);
      expect(line.ttfa_ms).toBe(line.ttft_ms);
      expect(line.ttfr_ms).toBeNull();
    }
    const manifest = JSON.parse(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8'));
    expect(manifest.workload.revision).toBe(summary.workload.revision);
    expect(manifest.server.effectiveConfig.build).toMatch(/^b\d+/);
    expect(manifest.model.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(manifest.environment.cpu.cores).toBeGreaterThan(0);
    expect(fs.readFileSync(path.join(out, 'requests.csv'), 'utf8').split('\n')[0]).toMatch(/^run_id,seq,warmup,group,item_id/);

    const shown = await inferlab(['runs', 'show', summary.run_id, '--db', db, '--json']);
    expect(JSON.parse(shown.stdout).summary.run_id).toBe(summary.run_id);
    const listed = JSON.parse((await inferlab(['runs', 'list', '--db', db, '--json'])).stdout);
    expect(listed[0]).toMatchObject({ run_id: summary.run_id, status: 'completed', requests: 40 });
  });

  it('runs open loop with warmup, flags warmup in exports, and keeps private text out of the database', async () => {
    const dir = tempDir();
    const db = path.join(dir, 'open.db');
    const summary = await inferlabJson(
      [
        'run',
        '--workload',
        'chat-short',
        '--model',
        'demo:q4_k_m',
        '--rate',
        '20',
        '--requests',
        '16',
        '--warmup',
        '3',
        '--private',
        '--slo',
        'ttft=2000,e2e=5000',
      ],
      db,
    );
    expect(summary.warmup_requests).toBe(3);
    expect(summary.requests.attempted).toBe(16);
    // 16 sends cannot support a p99 slip: withheld; the largest slip is reported instead.
    expect(summary.load).toMatchObject({
      mode: 'open',
      offered: 20,
      slip_ms_p99: null,
      slip_ms_max: expect.any(Number),
      achieved: expect.any(Number),
    });
    expect(summary.schedule_latency.ttft_from_schedule_ms).toMatchObject({
      n: summary.requests.completed,
      p95: null,
      unsupported: ['p95', 'p99'],
    });
    expect(summary.schedule_latency.ttft_from_schedule_ms.p50).toBeGreaterThanOrEqual(summary.metrics.ttft_ms.p50);
    expect(summary.schedule_latency.e2e_from_schedule_ms.n).toBe(summary.requests.completed);
    expect(summary.goodput.slo).toEqual({ ttft_ms: 2000, e2e_ms: 5000 });
    const out = path.join(dir, 'export');
    await inferlab(['export', summary.run_id, '--out', out, '--db', db]);
    const lines = fs
      .readFileSync(path.join(out, 'requests.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.filter((line) => line.warmup)).toHaveLength(3);
    for (const line of lines.filter((entry) => !entry.warmup)) {
      expect(line.ttft_from_schedule_ms).toBeCloseTo(line.t0_ms - line.scheduled_ms + line.ttft_ms, 9);
      expect(line.e2e_from_schedule_ms).toBeCloseTo(line.t0_ms - line.scheduled_ms + line.e2e_ms, 9);
    }
    expect(lines.every((line) => line.prompt === undefined && line.output === undefined && /^[0-9a-f]{64}$/.test(line.prompt_sha256))).toBe(
      true,
    );
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
      const counter = llamaServerTokenCounter(harness.servers.get(server.id).address!);
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
          workload: { def: await readWorkloadFile(await workloadPath('decode-heavy')), file: await workloadPath('decode-heavy') },
          target: {
            kind: 'model',
            modelRef: 'demo:q4_k_m',
            modelPath: await resolveModelRef('demo:q4_k_m'),
            profile: { ...defaultProfile(), parallelSlots: 2 },
          },
          load: { mode: 'closed', concurrency: 2 },
          stop: { requests: 40, durationMs: null },
          warmup: 0,
          slo: null,
          timeouts: { firstTokenMs: 30_000, totalMs: 60_000 },
          private: false,
          referenceRunId: null,
        },
        store: harness.store.runs,
        servers: harness.servers,
        engine: requireEngine,
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
        ? (probe.prepare('SELECT COUNT(*) AS n FROM requests').get() as { n: number }).n
        : 0;
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
      // A managed server takes its own key; at the shell, the variable --api-key-env names goes to the endpoint named there.
      const key = harness.servers.get(server.id).authHeaders.authorization!.replace(/^Bearer /, '');
      const refused = await inferlab(
        ['run', '--workload', 'chat-short', '--endpoint', `${server.baseUrl}/v1`, '--requests', '2', '--db', db, '--json'],
        { INFERLAB_API_KEY: '' },
      );
      expect(refused.code, refused.stdout).toBe(1);
      expect(JSON.parse(refused.stdout).error.message).toMatch(/\/v1\/models answered HTTP 401/);
      const result = await inferlab(
        [
          'run',
          '--workload',
          'chat-short',
          '--endpoint',
          `${server.baseUrl}/v1`,
          '--api-key-env',
          'SERVER_KEY',
          '--metrics-url',
          `${server.baseUrl}/metrics`,
          '--requests',
          '8',
          '--concurrency',
          '2',
          '--db',
          db,
          '--json',
        ],
        { SERVER_KEY: key },
      );
      expect(result.code, result.stderr).toBe(0);
      const summary = JSON.parse(result.stdout);
      expect(summary.requests.completed).toBe(8);
      expect(summary.metrics.ttft_ms.n).toBe(8);
      // --metrics-url: the endpoint's own counters over the window, read with its key.
      const outputTokens = (summary.throughput.output_tokens_per_s * summary.measurement.window_ms) / 1000;
      expect(summary.telemetry.server_metrics.predicted_tokens).toBeGreaterThan(0);
      expect(summary.telemetry.server_metrics.predicted_tokens).toBeCloseTo(outputTokens, -1);
    } finally {
      await harness.dispose();
    }
  });

  it('--shards sends an open loop from worker threads of the built CLI, each TTFT no shorter than the server prefill it contains', async () => {
    const db = path.join(tempDir(), 'shards.db');
    const summary = await inferlabJson(
      ['run', '--workload', 'chat-short', '--model', 'demo:q4_k_m', '--rate', '4', '--shards', '2', '--requests', '8', '--warmup', '1'],
      db,
    );
    expect(summary.requests.completed).toBe(8);
    const shards = summary.load.client.shards as { shard: number; requests: number }[];
    expect(shards.map((shard) => shard.shard).sort()).toEqual([0, 1]);
    expect(shards.reduce((sum, shard) => sum + shard.requests, 0)).toBe(9);
    const check = new Database(db, { readonly: true });
    const load = JSON.parse((check.prepare('SELECT manifest_json FROM runs').get() as { manifest_json: string }).manifest_json).load;
    const rows = check.prepare('SELECT ttft_ms, t0_ms, scheduled_ms, timings_json FROM requests WHERE warmup = 0').all() as {
      ttft_ms: number;
      t0_ms: number;
      scheduled_ms: number;
      timings_json: string;
    }[];
    check.close();
    expect(load).toMatchObject({ mode: 'open', rate: 4, shards: 2 });
    expect(rows).toHaveLength(8);
    for (const row of rows) {
      // Read on a shard's clock and stored on the run's: the first token still comes after the server's own prefill time.
      expect(row.ttft_ms).toBeGreaterThanOrEqual(JSON.parse(row.timings_json).prompt_ms);
      expect(row.t0_ms).toBeGreaterThanOrEqual(row.scheduled_ms);
    }
  });

  it('--reference judges each output against the same item of a stored run', async () => {
    const dir = tempDir();
    const db = path.join(dir, 'reference.db');
    const workload = path.join(dir, 'same.yaml');
    fs.writeFileSync(
      workload,
      'name: same\ndefaults: { max_tokens: 12, temperature: 0, seed: 3 }\ngroups:\n  - name: g\n    accept: [{ equals_reference: true }]\n    items:\n      - { id: a, prompt: "The old harbour" }\n      - { id: b, prompt: "Once upon a time" }\n',
    );
    const first = JSON.parse(
      (await inferlab(['run', '--workload', workload, '--model', 'demo:q8_0', '--set', 'c=1024', '--db', db, '--json'])).stdout,
    );
    // Without a reference the check cannot be judged: nothing is counted as checked.
    expect(first.requests).toMatchObject({ completed: 2, checked: 0 });
    const second = await inferlab([
      'run',
      '--workload',
      workload,
      '--model',
      'demo:q8_0',
      '--set',
      'c=1024',
      '--reference',
      first.run_id,
      '--db',
      db,
      '--json',
    ]);
    expect(second.code, second.stderr).toBe(0);
    // Greedy decoding on the same model and settings reproduces the reference exactly.
    expect(JSON.parse(second.stdout).requests).toMatchObject({ completed: 2, checked: 2, accepted: 2 });
    const missing = await inferlab(['run', '--workload', workload, '--model', 'demo:q8_0', '--reference', 'no-such-run', '--db', db]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/reference: no run no-such-run/);
  });

  it.each([
    [['--concurrency', '0'], /--concurrency must be a positive integer, got "0"/],
    [['--concurrency', '-2'], /--concurrency must be a positive integer, got "-2"/],
    [['--rate', 'abc'], /--rate must be a positive number, got "abc"/],
    [['--requests', '0'], /--requests must be a positive integer, got "0"/],
    [['--concurrency', '2', '--rate', '5'], /exclude each other/],
    [['--shards', '2'], /burstiness, maxOutstanding and shards need a rate \(open loop\)/],
    [['--rate', '5', '--shards', '0'], /--shards must be a positive integer, got "0"/],
    [['--rate', '5', '--shards', '65'], /shards must be at most 64/],
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
    fs.writeFileSync(
      path.join(dir, 'bad.yaml'),
      'name: bad\ngroups:\n  - name: g\n    items:\n      - id: a\n        prompt: x\n        temprature: 0\n',
    );
    const bad = await inferlab(['run', '--workload', path.join(dir, 'bad.yaml'), '--model', 'demo:q8_0', '--db', db]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/bad\.yaml:7:9: groups\[0\]\.items\[0\]\.temprature: unknown field/);
    expect(fs.existsSync(db)).toBe(false);

    fs.writeFileSync(
      path.join(dir, 'long.yaml'),
      'name: long\ngroups:\n  - name: g\n    items:\n      - id: too-long\n        prompt: x\n        max_tokens: 5000\n',
    );
    const long = await inferlab(['run', '--workload', path.join(dir, 'long.yaml'), '--model', 'demo:q8_0', '--set', 'c=1024', '--db', db]);
    expect(long.code).toBe(2);
    expect(long.stderr).toMatch(/long\.yaml: max_tokens beyond the server's context of 1024 tokens per request for too-long/);
    const check = new Database(db, { readonly: true });
    expect((check.prepare('SELECT COUNT(*) AS n FROM runs').get() as { n: number }).n).toBe(0);
    check.close();
  });
});
