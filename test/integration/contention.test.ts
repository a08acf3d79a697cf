import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultProfile } from '../../src/main/engines/llamacpp/launch-args';
import { EXPERIMENT_DEFAULTS } from '../../src/shared/experiment-defaults';
import { listProcesses, readProcStat, TICKS_PER_SECOND, type ProcStat } from '../../src/main/telemetry/proc-stat';
import { inferlab, startInferlab, type CliResult } from '../support/cli';
import { serverHarness } from '../support/servers';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();
const profile = { ...defaultProfile(), contextSize: 1024, threads: 2 };

function collect(child: ReturnType<typeof startInferlab>): Promise<CliResult> {
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The oldest llama-server the given CLIs started, once one exists; null when they all ended without one. */
async function oldestServerOf(parents: number[], ended: Promise<unknown>): Promise<ProcStat | null> {
  let done = false;
  void ended.then(() => (done = true));
  while (!done) {
    const servers = listProcesses()
      .filter((entry) => entry.comm === 'llama-server' && parents.includes(entry.ppid) && entry.state !== 'Z')
      .sort((x, y) => x.startTicks - y.startTicks || x.pid - y.pid);
    if (servers.length > 0) return servers[0]!;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return null;
}

/**
 * Real llama-servers on this two-core machine. Other work may share the machine while
 * these run, so no assertion depends on the machine being otherwise idle: the servers
 * started here are forced where another llama-server could be in the way, and the
 * contaminated case is judged by what is attributed to the burner started here.
 */
describe('contention between a run and the rest of the machine', () => {
  const burners: ChildProcess[] = [];
  afterEach(() => {
    for (const burner of burners.splice(0)) burner.kill('SIGKILL');
  });

  it('refuses a second server whose threads would oversubscribe the cores, and starts it when forced', async () => {
    const harness = await serverHarness(tempDir());
    // Another manager: the same process, but not the one that schedules the first server.
    const other = await serverHarness(tempDir());
    try {
      const first = await harness.servers.start({ modelRef: 'demo:q4_k_m', profile, force: true });
      expect(first.state).toBe('ready');
      const refusal = other.servers.prepare({ modelRef: 'demo:q8_0', profile });
      await expect(refusal).rejects.toThrow(/Refusing to start llama-server with 2 threads/);
      const message = await refusal.catch((error: Error) => error.message);
      expect(message).toContain(`llama-server pid ${first.pid} (already running, 2 threads)`);
      expect(message).toMatch(/this machine's \d+ cores/);
      expect(message).toMatch(/--force/);

      const cli = await inferlab([
        'server',
        'start',
        '--model',
        'demo:q8_0',
        '--set',
        'c=1024',
        '--set',
        'threads=2',
        '--db',
        path.join(tempDir(), 'cli.db'),
      ]);
      expect(cli.code).toBe(2);
      expect(cli.stderr).toContain(`llama-server pid ${first.pid} (already running, 2 threads)`);
      expect(cli.stderr).toMatch(/--force/);

      const forced = await other.servers.start({ modelRef: 'demo:q8_0', profile, force: true });
      expect(forced.state).toBe('ready');
      // The manager's own servers are its to schedule: a start that asks for every core beside them is
      // refused for the other manager's server alone, never for the first manager's own.
      const own = await harness.servers
        .prepare({ modelRef: 'demo:q8_0', profile: { ...profile, threads: os.availableParallelism() }, force: false })
        .then(
          () => null,
          (error: Error) => error,
        );
      expect(own).toBeInstanceOf(Error);
      expect(own!.message).toContain(`llama-server pid ${forced.pid} `);
      expect(own!.message).not.toContain(`pid ${first.pid} `);
    } finally {
      await Promise.all([harness.dispose(), other.dispose()]);
    }
  });

  it('of two runs started at once on the same cores, one is refused: they cannot both report completed', async () => {
    const db = (name: string) => path.join(tempDir(), `${name}.db`);
    const args = (name: string) => [
      'run',
      '--workload',
      'chat-short',
      '--model',
      'demo:q4_k_m',
      '--set',
      'threads=2',
      '--set',
      'c=1024',
      '--requests',
      '4',
      '--db',
      db(name),
      '--json',
    ];
    const children = [startInferlab(args('a')), startInferlab(args('b'))];
    const results = children.map(collect);
    // However far apart the two CLIs get going, the older server is held (SIGSTOP) while the other
    // run decides, so the two servers always overlap: the other is refused before or after loading.
    const held = await oldestServerOf(
      children.map((child) => child.pid!),
      Promise.all(results),
    );
    try {
      if (held !== null) {
        process.kill(held.pid, 'SIGSTOP');
        await results[children.findIndex((child) => child.pid !== held.ppid)];
      }
    } finally {
      if (held !== null) process.kill(held.pid, 'SIGCONT');
    }
    const [a, b] = await Promise.all(results);
    const stderr = `${a!.stderr}\n${b!.stderr}`;
    const refused = [a!, b!].filter((result) => /Refusing to start llama-server with 2 threads/.test(result.stderr));
    expect(refused.length, stderr).toBeGreaterThanOrEqual(1);
    for (const result of refused) expect(result.code).not.toBe(0);
    expect([a!, b!].filter((result) => result.code === 0).length, stderr).toBeLessThanOrEqual(1);
  });

  it(
    'marks a run beside a CPU burner contaminated and names the burner; a run without it does not name it',
    // The GPU sampler's own processes must not count as competition.
    { timeout: 240_000 },
    async () => {
      const threshold = EXPERIMENT_DEFAULTS.contentionCpuCores;
      const dir = tempDir();
      // One server thread: it shares the cores with the burners without spinning against them.
      const run = (name: string) =>
        inferlab([
          'run',
          '--workload',
          'chat-short',
          '--model',
          'demo:q4_k_m',
          '--set',
          'c=1024',
          '--set',
          'threads=1',
          '--requests',
          '4',
          '--force',
          '--db',
          path.join(dir, `${name}.db`),
          '--json',
        ]);

      // Three busy loops beside a one-thread server on two cores: on an idle machine they take
      // about 1.5 cores, three times the threshold; on a shared one, less, but never nothing.
      for (let i = 0; i < 3; i++) burners.push(spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }));
      const burnerPids = burners.map((burner) => burner.pid!);
      const burnerTicks = () => burnerPids.reduce((sum, pid) => sum + (readProcStat(pid)?.cpuTicks ?? 0), 0);
      const ticksBefore = burnerTicks();
      const startedAt = performance.now();
      const crowded = await run('crowded');
      // What the burners took, as this test itself measures it over the whole CLI run.
      const measuredCores = (burnerTicks() - ticksBefore) / TICKS_PER_SECOND / ((performance.now() - startedAt) / 1000);
      for (const burner of burners.splice(0)) burner.kill('SIGKILL');
      expect(crowded.code, crowded.stderr).toBe(0);
      const summary = JSON.parse(crowded.stdout);
      const contention = summary.telemetry.contention;
      expect(contention.samples).toBeGreaterThan(0);
      // However busy the machine was otherwise, the burners took more than the threshold: the run was crowded.
      expect(measuredCores).toBeGreaterThan(threshold);
      const burnerCores = contention.top_processes
        .filter((entry: { pid: number }) => burnerPids.includes(entry.pid))
        .reduce((sum: number, entry: { cpu_cores_mean: number }) => sum + entry.cpu_cores_mean, 0);
      // Attributed to the burners: the sampler watches only the run, not the CLI's start-up where the burners got
      // less, so it sees at least a good part of what was measured over the whole CLI.
      expect(burnerCores, `measured ${measuredCores.toFixed(2)} cores`).toBeGreaterThan(measuredCores / 2);
      // The machine-wide figure holds the burners and whatever else ran. The two are sampled at slightly different
      // instants from different counters (/proc/stat and each /proc/PID/stat), so on a short run they differ by a
      // few ticks per sample: a clean-clone CI once read 1.03 machine-wide against 1.17 attributed.
      expect(contention.other_cpu_cores_mean).toBeGreaterThanOrEqual(burnerCores * 0.8);
      expect(contention.other_cpu_cores_mean).toBeGreaterThan(threshold);
      expect(contention.contaminated).toBe(true);
      expect(contention.reason).toMatch(/other processes used [\d.]+ CPU cores on average/);
      const shown = await inferlab(['runs', 'show', summary.run_id, '--db', path.join(dir, 'crowded.db')]);
      expect(shown.stdout).toMatch(/CONTAMINATED: other processes used/);

      const clean = await run('clean');
      expect(clean.code, clean.stderr).toBe(0);
      const quiet = JSON.parse(clean.stdout).telemetry.contention;
      expect(quiet.samples).toBeGreaterThan(0);
      expect(quiet.top_processes.map((entry: { pid: number }) => entry.pid)).not.toEqual(expect.arrayContaining([burnerPids[0]]));
      // Whatever else shared the machine, the verdict follows the stated rule.
      const busyServer = quiet.other_llama_servers.some((server: { busy: boolean }) => server.busy);
      expect(quiet.contaminated).toBe(quiet.other_cpu_cores_mean > threshold || busyServer);
      expect(quiet.threshold_cpu_cores).toBe(threshold);
    },
  );
});
