import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { identify, isAlive } from '../../src/main/core/process-identity';
import { DEFAULT_TIMEOUTS } from '../../src/main/server/managed-server';
import { defaultProfile } from '../../src/main/engines/llamacpp/launch-args';
import { resolveModelRef } from '../../src/main/models/demo-models';
import { runWorkload } from '../../src/main/runner/run-workload';
import { readWorkloadFile, workloadPath } from '../../src/main/workload/parse-workload';
import { inferlab, killWithWatchdog, startInferlab } from '../support/cli';
import { requireEngine } from '../support/engine';
import { serverHarness } from '../support/servers';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

async function storedRequests(db: string): Promise<number> {
  if (!fs.existsSync(db)) return 0;
  const probe = new Database(db, { readonly: true, fileMustExist: true });
  try {
    const exists = probe.prepare("SELECT COUNT(*) AS n FROM sqlite_master WHERE name = 'requests'").get() as { n: number };
    return exists.n ? (probe.prepare('SELECT COUNT(*) AS n FROM requests').get() as { n: number }).n : 0;
  } finally {
    probe.close();
  }
}

describe('faults against the real server', () => {
  it('a hung server (SIGSTOP): timeouts fire, the run ends as aborted, the server is stopped', async () => {
    const harness = await serverHarness(tempDir());
    let pid: number | null = null;
    harness.servers.changes.on((snapshot) => snapshot.state === 'ready' && (pid = snapshot.pid));
    let stopped = false;
    let stoppedAt = 0;
    const timeouts = { firstTokenMs: 1500, totalMs: 3000 };
    try {
      const started = performance.now();
      const { summary } = await runWorkload({
        request: {
          workload: { def: await readWorkloadFile(await workloadPath('chat-short')), file: await workloadPath('chat-short') },
          target: { kind: 'model', modelRef: 'demo:q4_k_m', modelPath: await resolveModelRef('demo:q4_k_m'), profile: defaultProfile() },
          load: { mode: 'closed', concurrency: 1 },
          stop: { requests: 200, durationMs: null },
          warmup: 0,
          slo: null,
          timeouts,
          private: false,
          referenceRunId: null,
          baselineMs: 100,
        },
        store: harness.store.runs,
        servers: harness.servers,
        engine: requireEngine,
        onProgress: (progress) => {
          if (!stopped && progress.finished >= 2 && pid) {
            stopped = true;
            stoppedAt = performance.now();
            process.kill(pid, 'SIGSTOP');
          }
        },
      });
      const afterStop = performance.now() - stoppedAt;
      expect(summary.status).toBe('aborted');
      expect(summary.status_reason).toMatch(/stopped responding: 3 requests in a row failed \((first_token_timeout|total_timeout)\)/);
      expect(
        (summary.requests.failures_by_class.first_token_timeout ?? 0) + (summary.requests.failures_by_class.total_timeout ?? 0),
      ).toBeGreaterThanOrEqual(3);
      // The hang was waited out by the timeouts: no failed request ended before its timeout was due (Node's
      // millisecond timers may fire a fraction of a millisecond early on the high-resolution clock).
      const failed = harness.store.runs.measuredRequests(summary.run_id).filter((row) => row.error_class !== null);
      expect(failed.length).toBeGreaterThanOrEqual(3);
      for (const row of failed) {
        const due = row.error_class === 'first_token_timeout' ? timeouts.firstTokenMs : timeouts.totalMs;
        expect(row.end_ms! - row.t0_ms, row.error_class!).toBeGreaterThanOrEqual(due - 2);
      }
      // Nor did the run wait longer than three total timeouts and the server's stop, give or take what
      // starting the server and its first requests took on this machine just before.
      expect(afterStop).toBeLessThan(3 * timeouts.totalMs + DEFAULT_TIMEOUTS.stopGraceMs + (stoppedAt - started));
      expect(isAlive(identify(pid!))).toBe(false);
    } finally {
      await harness.dispose();
    }
  });

  it('a SIGKILLed CLI mid-run: the next start marks the run interrupted with its requests, sweeps the server, integrity ok', async () => {
    const db = path.join(tempDir(), 'killed.db');
    const child = startInferlab(['run', '--workload', 'decode-heavy', '--model', 'demo:q8_0', '--requests', '200', '--db', db]);
    for (let i = 0; i < 300 && (await storedRequests(db)) < 2; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    const sessions = new Database(db, { readonly: true });
    const server = sessions.prepare('SELECT pid, pid_start_ticks FROM server_sessions WHERE ended_at IS NULL').get() as {
      pid: number;
      pid_start_ticks: number;
    };
    sessions.close();
    await killWithWatchdog(child);
    expect(isAlive({ pid: server.pid, startTicks: server.pid_start_ticks })).toBe(true);
    const stored = await storedRequests(db);

    const next = await inferlab(['runs', 'list', '--db', db, '--json']);
    expect(next.stderr).toMatch(/stopped an orphaned llama-server/);
    expect(next.stderr).toMatch(/marked 1 unfinished run\(s\) as interrupted/);
    const [run] = JSON.parse(next.stdout);
    expect(run.status).toBe('interrupted');
    expect(run.requests).toBeGreaterThanOrEqual(stored);
    for (let i = 0; i < 50 && isAlive({ pid: server.pid, startTicks: server.pid_start_ticks }); i++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(isAlive({ pid: server.pid, startTicks: server.pid_start_ticks })).toBe(false);
    const check = new Database(db, { readonly: true });
    expect(check.pragma('integrity_check', { simple: true })).toBe('ok');
    check.close();
  });

  it('a model file deleted while its server runs: the run finishes, the next start names the missing file', async () => {
    const dir = tempDir();
    const model = path.join(dir, 'copy.gguf');
    fs.copyFileSync(await resolveModelRef('demo:q4_k_m'), model);
    const harness = await serverHarness(dir);
    try {
      const server = await harness.servers.prepare({ modelRef: model, profile: defaultProfile() });
      await server.start();
      const { summary } = await runWorkload({
        request: {
          workload: { def: await readWorkloadFile(await workloadPath('chat-short')), file: await workloadPath('chat-short') },
          target: { kind: 'server', server, modelRef: model, modelPath: model },
          load: { mode: 'closed', concurrency: 1 },
          stop: { requests: 4, durationMs: null },
          warmup: 0,
          slo: null,
          timeouts: { firstTokenMs: 10_000, totalMs: 20_000 },
          private: false,
          referenceRunId: null,
          baselineMs: 100,
        },
        store: harness.store.runs,
        servers: harness.servers,
        engine: requireEngine,
        onProgress: (progress) => progress.finished === 1 && fs.rmSync(model, { force: true }),
      });
      // The server has the weights mapped: the run in progress finishes.
      expect(summary.status).toBe('completed');
      expect(summary.requests.completed).toBe(4);
      expect(fs.existsSync(model)).toBe(false);
      await expect(harness.servers.start({ modelRef: model, profile: defaultProfile() })).rejects.toThrow(
        /Model file not found: .*copy\.gguf/,
      );
    } finally {
      await harness.dispose();
    }
  });
});

const canMount = process.getuid?.() === 0 && spawnSync('mount', ['--version']).status === 0;
if (!canMount) console.log('[faults] full-filesystem test skipped: needs root and mount(8) to create a small tmpfs');

describe.runIf(canMount)('a database on a full filesystem', () => {
  it('ends the run with a clear storage error, keeps committed requests, and leaves no corrupt database', async (context) => {
    const dir = tempDir();
    const mountPoint = path.join(dir, 'tiny');
    fs.mkdirSync(mountPoint);
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=3m', 'tmpfs', mountPoint]);
    if (mounted.status !== 0) {
      // Reported as skipped, not passed: nothing was checked.
      console.log(`[faults] full-filesystem test skipped: mount failed: ${mounted.stderr}`);
      context.skip(`mount failed: ${mounted.stderr}`);
    }
    try {
      const db = path.join(mountPoint, 'full.db');
      // Leave a little room: enough for the schema and a few batches, not for the whole run.
      const created = await inferlab(['runs', 'list', '--db', db]);
      expect(created.code).toBe(0);
      const free = () =>
        Number(spawnSync('df', ['--output=avail', '-B1', mountPoint], { encoding: 'utf8' }).stdout.trim().split('\n').pop());
      fs.writeFileSync(path.join(mountPoint, 'filler'), Buffer.alloc(Math.max(0, free() - 160 * 1024)));
      const result = await inferlab([
        'run',
        '--workload',
        'decode-heavy',
        '--model',
        'demo:q4_k_m',
        '--requests',
        '400',
        '--db',
        db,
        '--json',
      ]);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/database or disk is full|SQLITE_FULL|disk is full/i);
      expect(result.stderr).toMatch(/stored requests are kept|requests were stored before that and are intact/);
      fs.rmSync(path.join(mountPoint, 'filler'));
      const check = new Database(db);
      expect(check.pragma('integrity_check', { simple: true })).toBe('ok');
      const stored = (check.prepare('SELECT COUNT(*) AS n FROM requests').get() as { n: number }).n;
      check.close();
      expect(stored).toBeGreaterThan(0);
      const after = await inferlab(['runs', 'list', '--db', db, '--json']);
      expect(JSON.parse(after.stdout)[0].status).toMatch(/failed|interrupted/);
    } finally {
      spawnSync('umount', [mountPoint]);
    }
  });
});
