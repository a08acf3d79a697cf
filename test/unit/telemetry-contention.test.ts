import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ContentionSample } from '../../src/shared/contract/telemetry';
import { ContentionSampler, LLAMA_SERVER_BUSY_CORES, summarizeContention } from '../../src/main/telemetry/contention';
import {
  descendants,
  findLlamaServers,
  listProcesses,
  parseProcStat,
  readCpuTotals,
  threadsFromArgv,
} from '../../src/main/telemetry/proc-stat';
import { olderThan, oversubscription } from '../../src/main/server/oversubscription';
import { useTempDirs } from '../support/temp';

/** A window of the first second, sampled every 250 ms on two CPUs, contaminated above half a core. */
const ONE_SECOND_ON_TWO_CPUS = { windowStart: 0, windowEnd: 1000, thresholdCores: 0.5, intervalMs: 250, cpus: 2 };

const tempDir = useTempDirs();

/**
 * A FAKE /proc, written at the OS edge: the files the kernel would show, in its formats
 * (proc(5): /proc/stat's cpu lines in USER_HZ ticks, /proc/<pid>/stat, NUL-separated
 * cmdline), with numbers chosen by hand so every figure below can be checked on paper.
 */
class FakeProc {
  readonly root = tempDir();
  private busy = { user: 0, system: 0, irq: 0 };

  constructor(private readonly cpus = 2) {
    this.setBusy(0, 0);
  }

  setBusy(user: number, system: number, irq = 0): void {
    this.busy = { user, system, irq };
    const line = (name: string, share: number) =>
      `${name} ${Math.round(this.busy.user * share)} 0 ${Math.round(this.busy.system * share)} 99999 10 ${Math.round(this.busy.irq * share)} 0 0 0 0`;
    fs.writeFileSync(
      path.join(this.root, 'stat'),
      [line('cpu ', 1), ...Array.from({ length: this.cpus }, (_, i) => line(`cpu${i}`, 1 / this.cpus)), 'intr 0', 'ctxt 0', ''].join('\n'),
    );
  }

  process(options: {
    pid: number;
    ppid: number;
    comm: string;
    utime: number;
    stime?: number;
    start?: number;
    argv?: string[];
    state?: string;
  }): void {
    const dir = path.join(this.root, String(options.pid));
    fs.mkdirSync(dir, { recursive: true });
    const fields = [
      options.state ?? 'S',
      options.ppid,
      options.pid,
      options.pid,
      0,
      -1,
      4194304,
      0,
      0,
      0,
      0,
      options.utime,
      options.stime ?? 0,
      0,
      0,
      20,
      0,
      1,
      0,
      options.start ?? 1000,
      1000000,
      100,
    ];
    fs.writeFileSync(path.join(dir, 'stat'), `${options.pid} (${options.comm}) ${fields.join(' ')}\n`);
    fs.writeFileSync(path.join(dir, 'cmdline'), options.argv ? `${options.argv.join('\0')}\0` : '');
  }

  remove(pid: number): void {
    fs.rmSync(path.join(this.root, String(pid)), { recursive: true, force: true });
  }
}

describe('/proc accounting (fake /proc)', () => {
  it('parses stat lines whose command name holds spaces and parentheses', () => {
    expect(parseProcStat('42 (tmux: server (x)) S 1 42 42 0 -1 0 0 0 0 0 700 300 0 0 20 0 1 0 5555 0 0')).toMatchObject({
      pid: 42,
      ppid: 1,
      comm: 'tmux: server (x)',
      state: 'S',
      cpuTicks: 1000,
      startTicks: 5555,
    });
    expect(parseProcStat('garbage')).toBeNull();
  });

  it('reads busy ticks and the CPU count from /proc/stat, and a tree from parent links', () => {
    const proc = new FakeProc(4);
    proc.setBusy(1000, 500, 20);
    expect(readCpuTotals(proc.root)).toEqual({ busyTicks: 1520, cpus: 4 });
    proc.process({ pid: 1, ppid: 0, comm: 'init', utime: 0 });
    proc.process({ pid: 10, ppid: 1, comm: 'llama-server', utime: 0 });
    proc.process({ pid: 11, ppid: 10, comm: 'child', utime: 0 });
    proc.process({ pid: 12, ppid: 11, comm: 'grandchild', utime: 0 });
    proc.process({ pid: 20, ppid: 1, comm: 'other', utime: 0 });
    expect([...descendants(listProcesses(proc.root), 10)].sort((a, b) => a - b)).toEqual([10, 11, 12]);
    expect(readCpuTotals(path.join(proc.root, 'missing'))).toBeNull();
  });

  it("counts as competition the machine's busy time minus the server tree and this process, and names who used it", () => {
    const proc = new FakeProc(2);
    const init = { pid: 1, ppid: 0, comm: 'init', utime: 0 };
    proc.process(init);
    // The measured server (100) with its helper, this process (200), a burner (300) and another llama-server (400).
    const machineAt = (ticks: { server: number; helper: number; self: number; burner: number; otherServer: number }) => {
      proc.process({
        pid: 100,
        ppid: 200,
        comm: 'llama-server',
        utime: ticks.server,
        start: 500,
        argv: ['/opt/llama-server', '-m', 'm.gguf', '-t', '2'],
      });
      proc.process({ pid: 101, ppid: 100, comm: 'helper', utime: ticks.helper });
      proc.process({ pid: 200, ppid: 1, comm: 'node', utime: ticks.self, argv: ['node', 'bin/inferlab', 'run'] });
      proc.process({ pid: 300, ppid: 1, comm: 'node', utime: ticks.burner, argv: ['node', '-e', 'for(;;){}'] });
      proc.process({
        pid: 400,
        ppid: 1,
        comm: 'llama-server',
        utime: ticks.otherServer,
        start: 100,
        argv: ['llama-server', '--threads', '1'],
      });
    };
    machineAt({ server: 1000, helper: 50, self: 400, burner: 10, otherServer: 5 });
    proc.process({ pid: 500, ppid: 1, comm: 'sleep', utime: 1, argv: ['sleep', '99'] });
    proc.setBusy(5000, 1000);
    let now = 0;
    const sampler = new ContentionSampler({ clock: () => now, serverPid: 100, selfPids: () => [200], procRoot: proc.root });
    expect(sampler.sample()).toBeNull();

    // One second later: server 1.0 + helper 0.2 cores, self 0.1, burner 0.9, other llama-server 0.3,
    // and 0.05 cores from a process that came and went between the two readings.
    now = 1000;
    machineAt({ server: 1100, helper: 70, self: 410, burner: 100, otherServer: 35 });
    proc.setBusy(5000 + 100 + 20 + 10 + 90 + 30 + 5, 1000);
    const sample = sampler.sample()!;
    expect(sample.t).toBe(1000);
    expect(sample.interval_ms).toBe(1000);
    expect(sample.other_cpu_cores).toBeCloseTo(1.25, 6);
    expect(sample.processes.sort((a, b) => b.cores - a.cores)).toEqual([
      { pid: 300, command: 'node', cores: 0.9 },
      { pid: 400, command: 'llama-server', cores: 0.3 },
    ]);
    expect(sample.llama_servers).toEqual([{ pid: 400, command: 'llama-server', cores: 0.3 }]);

    const summary = summarizeContention(sampler.samples, ONE_SECOND_ON_TWO_CPUS);
    expect(summary).toMatchObject({
      samples: 1,
      cpus: 2,
      other_cpu_cores_mean: 1.25,
      other_cpu_cores_max: 1.25,
      // One sample cannot support a p95 (PERCENTILE_MIN_N.p95 = 20).
      other_cpu_cores_p95: null,
      contaminated: true,
      other_llama_servers: [{ pid: 400, command: 'llama-server', cpu_cores_mean: 0.3, busy: true }],
      unavailable_reason: null,
    });
    expect(summary.top_processes[0]).toEqual({ pid: 300, command: 'node', cpu_cores_mean: 0.9 });
    expect(summary.reason).toMatch(
      /other processes used 1\.25 CPU cores on average \(threshold 0\.5; 2 cores in all\): pid 300 node 0\.90/,
    );
    expect(summary.reason).toMatch(/another llama-server \(pid 400\) was busy, 0\.30 cores/);
  });

  it('counts a pid first seen (or reused) within an interval from zero, and a process that ended not at all', () => {
    const proc = new FakeProc(2);
    proc.process({ pid: 300, ppid: 1, comm: 'old', utime: 500, start: 10 });
    proc.setBusy(1000, 0);
    let now = 0;
    const sampler = new ContentionSampler({ clock: () => now, serverPid: null, selfPids: () => [], procRoot: proc.root });
    sampler.sample();
    now = 500;
    proc.process({ pid: 300, ppid: 1, comm: 'reused', utime: 20, start: 99 });
    proc.process({ pid: 301, ppid: 1, comm: 'new', utime: 10, start: 100 });
    proc.setBusy(1030, 0);
    const sample = sampler.sample()!;
    expect(sample.processes.sort((a, b) => a.pid - b.pid)).toEqual([
      { pid: 300, command: '[reused]', cores: 0.4 },
      { pid: 301, command: '[new]', cores: 0.2 },
    ]);
    expect(sample.other_cpu_cores).toBeCloseTo(0.6, 6);
    now = 1000;
    proc.remove(300);
    proc.setBusy(1030, 0);
    expect(sampler.sample()!.other_cpu_cores).toBe(0);
  });

  it('is not contaminated below the threshold, and an idle llama-server is listed but does not spoil the run', () => {
    const samples: ContentionSample[] = Array.from({ length: 40 }, (_, i) => ({
      t: (i + 1) * 250,
      interval_ms: 250,
      other_cpu_cores: i === 39 ? 1.5 : 0.1,
      processes: [{ pid: 7, command: '/usr/bin/gcc x.c', cores: 0.1 }],
      llama_servers: [{ pid: 9, command: 'llama-server -t 1', cores: 0 }],
      gpu_processes: [{ pid: 4242, command: 'python3', used_mib: 700 }],
    }));
    const summary = summarizeContention(samples, { windowStart: 0, windowEnd: 10_000, thresholdCores: 0.5, intervalMs: 250, cpus: 2 });
    expect(summary.contaminated).toBe(false);
    expect(summary.reason).toBeNull();
    expect(summary.other_cpu_cores_mean).toBeCloseTo((39 * 0.1 + 1.5) / 40, 3);
    // 40 samples support a p95: the 38th of 40 sorted values.
    expect(summary.other_cpu_cores_p95).toBe(0.1);
    expect(summary.other_cpu_cores_max).toBe(1.5);
    expect(summary.other_llama_servers).toEqual([{ pid: 9, command: 'llama-server -t 1', cpu_cores_mean: 0, busy: false }]);
    expect(summary.other_gpu_processes).toEqual([{ pid: 4242, command: 'python3', used_mib_max: 700 }]);
    expect(summary.top_processes).toEqual([{ pid: 7, command: '/usr/bin/gcc x.c', cpu_cores_mean: 0.1 }]);
  });

  it('counts only the intervals inside the measured window, time-weighted', () => {
    const at = (t: number, interval: number, cores: number): ContentionSample => ({
      t,
      interval_ms: interval,
      other_cpu_cores: cores,
      processes: [],
      llama_servers: cores > 1 ? [{ pid: 5, command: 'llama-server', cores }] : [],
      gpu_processes: [],
    });
    // Warmup (before 1000) was crowded; the window [1000, 3000] holds one 500 ms and one 1500 ms interval.
    const samples = [at(500, 500, 1.9), at(1000, 500, 1.9), at(1500, 500, 0.2), at(3000, 1500, 0.7)];
    const summary = summarizeContention(samples, { windowStart: 1000, windowEnd: 3000, thresholdCores: 0.5, intervalMs: 500, cpus: 2 });
    expect(summary.samples).toBe(2);
    expect(summary.other_cpu_cores_mean).toBeCloseTo((0.2 * 0.5 + 0.7 * 1.5) / 2, 3);
    expect(summary.other_llama_servers).toEqual([]);
    expect(summary.contaminated).toBe(true);
    expect(LLAMA_SERVER_BUSY_CORES).toBeGreaterThan(0);
  });

  it('says why when nothing could be measured, and is then not contaminated', () => {
    const sampler = new ContentionSampler({
      clock: () => 0,
      serverPid: null,
      selfPids: () => [],
      procRoot: path.join(tempDir(), 'no-proc'),
    });
    expect(sampler.sample()).toBeNull();
    expect(sampler.unavailableReason).toMatch(/not readable/);
    const summary = summarizeContention([], {
      windowStart: 0,
      windowEnd: 10,
      thresholdCores: 0.5,
      intervalMs: 250,
      cpus: 1,
      unavailableReason: sampler.unavailableReason,
    });
    expect(summary).toMatchObject({
      contaminated: false,
      reason: null,
      other_cpu_cores_mean: null,
      unavailable_reason: expect.stringMatching(/not readable/),
    });
  });
});

describe("other people's command lines stay theirs", () => {
  // Attack: another user's processes run with secrets in their argv, which every local user can
  // read; a run that recorded them would put those secrets in summary.json and shared exports.
  const secrets = ['sk-live-7Hq2SECRET', 'hf_aBcSECRETtoken', 'pSECRETpw', 'SECRET-bearer'];
  const withSecrets = (proc: FakeProc, utime: number) => {
    proc.process({ pid: 10, ppid: 1, comm: 'vllm', utime, start: 5, argv: ['/opt/venv/bin/vllm', 'serve', 'm', '--api-key', secrets[0]!] });
    proc.process({ pid: 11, ppid: 1, comm: 'llama-server', utime, start: 6, argv: ['llama-server', '--hf-token', secrets[1]!, '-t', '1'] });
    proc.process({ pid: 12, ppid: 1, comm: 'mysql', utime, start: 7, argv: ['mysql', '-uroot', `-${secrets[2]!}`] });
    proc.process({
      pid: 13,
      ppid: 1,
      comm: 'python3',
      utime,
      start: 8,
      argv: ['python3', '-m', 'sglang.launch_server', '--api-key', secrets[3]!],
    });
  };

  it('records each competing process by its program (and Python module), never by its arguments', () => {
    const proc = new FakeProc(2);
    withSecrets(proc, 0);
    proc.setBusy(1000, 0);
    let now = 0;
    const sampler = new ContentionSampler({
      clock: () => now,
      serverPid: null,
      selfPids: () => [],
      procRoot: proc.root,
      gpuProcesses: () => [{ t: 0, pid: 10, usedMib: 4000, gpuUuid: 'GPU-1', name: '/opt/venv/bin/vllm' }],
    });
    sampler.sample();
    now = 1000;
    withSecrets(proc, 40);
    proc.setBusy(1000 + 160, 0);
    sampler.sample();
    const summary = summarizeContention(sampler.samples, ONE_SECOND_ON_TWO_CPUS);
    expect(summary.top_processes.map((entry) => entry.command).sort()).toEqual([
      'llama-server',
      'mysql',
      'python3 -m sglang.launch_server',
      'vllm',
    ]);
    expect(summary.other_gpu_processes).toEqual([{ pid: 10, command: 'vllm', used_mib_max: 4000 }]);
    const recorded = JSON.stringify({ summary, samples: sampler.samples });
    for (const secret of secrets) expect(recorded).not.toContain(secret);

    // The refusal to oversubscribe names the other server the same way, in its message and its details.
    const found = findLlamaServers({ root: proc.root, cores: 2 });
    expect(found.map((server) => server.command)).toEqual(['llama-server']);
    const refusal = oversubscription({ threads: 2, cores: 2, others: found });
    expect(JSON.stringify({ refusal, found })).not.toContain(secrets[1]);
  });
});

describe('refusing to oversubscribe the cores', () => {
  it('finds llama-servers by kernel name or program, with their -t, skipping zombies and the excluded', () => {
    const proc = new FakeProc(2);
    proc.process({ pid: 10, ppid: 1, comm: 'llama-server', utime: 0, start: 300, argv: ['/x/llama-server', '-m', 'a.gguf', '-t', '2'] });
    proc.process({ pid: 11, ppid: 1, comm: 'server-renamed', utime: 0, start: 100, argv: ['/y/llama-server', '--threads=3'] });
    proc.process({ pid: 12, ppid: 1, comm: 'llama-server', utime: 0, start: 200, argv: ['llama-server', '-m', 'b.gguf'] });
    proc.process({ pid: 13, ppid: 1, comm: 'llama-server', utime: 0, state: 'Z' });
    proc.process({ pid: 14, ppid: 1, comm: 'fake-llama-serv', utime: 0, argv: ['/tmp/fake-llama-server', '30'] });
    proc.process({ pid: 15, ppid: 1, comm: 'llama-server', utime: 0, argv: ['llama-server', '-t', '1'] });
    const found = findLlamaServers({ root: proc.root, cores: 2, exclude: new Set([15]) });
    expect(found.map(({ pid, threads, threadsGiven }) => ({ pid, threads, threadsGiven }))).toEqual([
      { pid: 11, threads: 3, threadsGiven: true },
      { pid: 12, threads: 2, threadsGiven: false },
      { pid: 10, threads: 2, threadsGiven: true },
    ]);
    expect(threadsFromArgv(['-t', 'x', '--threads', '4'])).toBe(4);
    expect(threadsFromArgv(['-tb', '3'])).toBeNull();
  });

  it("refuses when the other servers' threads plus the new ones exceed the cores, naming cores, threads, pid and --force", () => {
    const other = {
      pid: 4321,
      command: 'llama-server -t 2',
      parentCommand: 'node /opt/app/bin/inferlab run',
      threads: 2,
      threadsGiven: true,
      startTicks: 1,
    };
    const message = oversubscription({ threads: 2, cores: 2, others: [other] });
    expect(message).toMatch(/Refusing to start llama-server with 2 threads/);
    expect(message).toMatch(/llama-server pid 4321 \(started by another Infer Lab process, 2 threads\)/);
    expect(message).toMatch(/2 of this machine's 2 cores/);
    expect(message).toMatch(/4 threads on 2 cores/);
    expect(message).toMatch(/--force/);
    expect(message).not.toMatch(/--set threads=/);
  });

  it('of two servers started at once, only the younger yields (start time, then pid)', () => {
    const server = (pid: number, startTicks: number) => ({
      pid,
      command: 'llama-server -t 2',
      parentCommand: 'node bin/inferlab run',
      threads: 2,
      threadsGiven: true,
      startTicks,
    });
    const a = server(100, 5000);
    const b = server(101, 5003);
    expect(olderThan(a, [b])).toEqual([]);
    expect(olderThan(b, [a])).toEqual([a]);
    // Same tick: the lower pid is the elder.
    const c = server(102, 5000);
    expect(olderThan(a, [c])).toEqual([]);
    expect(olderThan(c, [a])).toEqual([a]);
    expect(oversubscription({ threads: 2, cores: 2, others: olderThan(a, [b]) })).toBeNull();
    expect(oversubscription({ threads: 2, cores: 2, others: olderThan(b, [a]) })).toMatch(/pid 100 \(started by another Infer Lab process/);
  });

  it('allows a start that fits, and suggests the threads that would fit', () => {
    const one = { pid: 1, command: 'llama-server -t 1', parentCommand: 'bash', threads: 1, threadsGiven: true, startTicks: 1 };
    expect(oversubscription({ threads: 2, cores: 2, others: [] })).toBeNull();
    expect(oversubscription({ threads: 1, cores: 2, others: [one] })).toBeNull();
    expect(oversubscription({ threads: 4, cores: 8, others: [one, { ...one, pid: 2, threads: 3 }] })).toBeNull();
    const message = oversubscription({ threads: 2, cores: 2, others: [one] });
    expect(message).toMatch(/already running, 1 thread\)/);
    expect(message).toMatch(/--set threads=1/);
    const unstated = oversubscription({ threads: 1, cores: 4, others: [{ ...one, threads: 4, threadsGiven: false }] });
    expect(unstated).toMatch(/4 threads by default/);
  });
});

describe('a run against a local endpoint', () => {
  it("finds the llama-server listening on the endpoint's port, so it is not counted as competition", async () => {
    const { llamaServerOnPort, localPort } = await import('../../src/main/telemetry/proc-stat');
    const proc = new FakeProc(2);
    proc.process({ pid: 10, ppid: 1, comm: 'llama-server', utime: 0, argv: ['llama-server', '--port', '9001'] });
    proc.process({ pid: 11, ppid: 1, comm: 'llama-server', utime: 0, argv: ['llama-server', '--port=9002'] });
    proc.process({ pid: 12, ppid: 1, comm: 'llama-server', utime: 0, argv: ['llama-server', '-m', 'x.gguf'] });
    expect(llamaServerOnPort(9001, proc.root)).toBe(10);
    expect(llamaServerOnPort(9002, proc.root)).toBe(11);
    expect(llamaServerOnPort(8080, proc.root)).toBe(12);
    expect(llamaServerOnPort(9999, proc.root)).toBeNull();
    expect(localPort('http://127.0.0.1:9001')).toBe(9001);
    expect(localPort('http://localhost')).toBe(80);
    expect(localPort('https://api.example.com:8443')).toBeNull();
  });
});
