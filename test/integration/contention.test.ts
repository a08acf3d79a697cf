import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultProfile } from '../../src/main/engines/llamacpp/launch-args';
import { EXPERIMENT_DEFAULTS } from '../../src/shared/experiment-defaults';
import { inferlab } from '../support/cli';
import { serverHarness } from '../support/servers';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();
const profile = { ...defaultProfile(), contextSize: 1024, threads: 2 };

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
      // The manager's own servers are its to schedule: a third start beside them is not refused for them.
      const own = await harness.servers
        .prepare({ modelRef: 'demo:q8_0', profile: { ...profile, threads: 1 }, force: false })
        .catch((error: Error) => error);
      if (own instanceof Error) expect(own.message).not.toContain(`pid ${first.pid} `);
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
    const [a, b] = await Promise.all([inferlab(args('a')), inferlab(args('b'))]);
    const refused = [a, b].filter((result) => /Refusing to start llama-server with 2 threads/.test(result.stderr));
    expect(refused.length, `${a.stderr}\n${b.stderr}`).toBeGreaterThanOrEqual(1);
    for (const result of refused) expect(result.code).not.toBe(0);
  });

  it(
    'marks a run beside a CPU burner contaminated and names the burner; a run without it does not name it',
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
      const crowded = await run('crowded');
      for (const burner of burners.splice(0)) burner.kill('SIGKILL');
      expect(crowded.code, crowded.stderr).toBe(0);
      const summary = JSON.parse(crowded.stdout);
      const contention = summary.telemetry.contention;
      expect(contention.samples).toBeGreaterThan(0);
      const burnerCores = contention.top_processes
        .filter((entry: { pid: number }) => burnerPids.includes(entry.pid))
        .reduce((sum: number, entry: { cpu_cores_mean: number }) => sum + entry.cpu_cores_mean, 0);
      expect(burnerCores).toBeGreaterThan(0.25);
      // The machine-wide figure holds the burners and whatever else ran.
      expect(contention.other_cpu_cores_mean).toBeGreaterThanOrEqual(burnerCores - 0.15);
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
