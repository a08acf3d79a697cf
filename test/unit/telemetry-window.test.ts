import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readGpuMemoryOnce, usedMibOf } from '../../src/main/telemetry/gpu-sampler';
import { SmiClock, SweepCounter } from '../../src/main/telemetry/gpu-sample-clock';
import { parseComputeAppLine, parseSmiTimestamp } from '../../src/main/telemetry/nvidia-smi-parse';
import { BASELINE_INTERVALS, TelemetrySession } from '../../src/main/telemetry/telemetry-session';
import { useTempDirs } from '../support/temp';
import { measureOneWindow } from '../support/telemetry-window';

const tempDir = useTempDirs();
// The nvidia-smi stand-in, replaying lines constructed from its documented format (test/fixtures/nvidia-smi/README.md).
const standIn = path.join(import.meta.dirname, '..', 'fixtures', 'nvidia-smi', 'bin', 'nvidia-smi');
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('nvidia-smi timestamps on the run clock', () => {
  it('reads the documented timestamp format as local time', () => {
    expect(parseSmiTimestamp('2026/11/30 10:04:08.148')).toBe(new Date(2026, 10, 30, 10, 4, 8, 148).getTime());
    expect(parseSmiTimestamp(' 2026/01/02 03:04:05.6 ')).toBe(new Date(2026, 0, 2, 3, 4, 5, 600).getTime());
    expect(parseSmiTimestamp('[N/A]')).toBeNull();
    expect(parseSmiTimestamp('0')).toBeNull();
  });

  it('places a reading at the time it was taken, not when it arrived; an impossible stamp falls back to arrival', () => {
    let now = 5000;
    const epochAtStart = 1_800_000_000_000;
    const clock = new SmiClock(
      () => now,
      () => epochAtStart,
    );
    now = 7000;
    // Taken 1.2 s after sampling began, delivered 0.8 s late.
    expect(clock.place(epochAtStart + 1200)).toBe(6200);
    // An hour off (another time zone), in the future, or missing: arrival time.
    expect(clock.place(epochAtStart - 3_600_000)).toBe(7000);
    expect(clock.place(epochAtStart + 10_000)).toBe(7000);
    expect(clock.place(null)).toBe(7000);
    expect(clock.counts).toEqual({ device: 1, arrival: 3 });
  });

  it('ties the two clocks by the tightest of several pairs: a descheduling between two readings does not skew every sample', () => {
    // Constructed: one virtual time for both clocks (the wall clock 1.8e12 ms ahead); the thread loses
    // 20 ms after its first reading of the run's clock, as a loaded machine may.
    let virtual = 1000;
    let reads = 0;
    const runClock = () => {
      reads += 1;
      const reading = virtual;
      if (reads === 2) virtual += 20;
      return reading;
    };
    const clock = new SmiClock(runClock, () => virtual + 1_800_000_000_000);
    virtual += 500;
    // A reading taken now, stamped by the wall clock, lands at now on the run's clock, not 10 or 20 ms off.
    expect(clock.place(virtual + 1_800_000_000_000)).toBe(virtual);
  });

  it('numbers passes over the GPUs: a pass ends when a GPU comes round again or time moves on', () => {
    const sweeps = new SweepCounter(250);
    expect([
      sweeps.assign('0', 0),
      sweeps.assign('1', 1),
      sweeps.assign('0', 250),
      sweeps.assign('1', 251),
      sweeps.assign('1', 500),
      sweeps.assign('0', 900),
    ]).toEqual([1, 1, 2, 2, 3, 4]);
  });

  it('reads compute-process lines with GPU, name (commas and all) and memory', () => {
    expect(parseComputeAppLine('2026/11/30 10:04:08.148, GPU-aaaa, 812, /usr/bin/python3 a,b.py, 700', 3)).toEqual({
      t: 3,
      pid: 812,
      usedMib: 700,
      gpuUuid: 'GPU-aaaa',
      name: '/usr/bin/python3 a,b.py',
    });
    expect(parseComputeAppLine('2026/11/30 10:04:08.148, GPU-aaaa, [N/A], x, 700', 3)).toBeNull();
  });
});

describe('a telemetry session with the nvidia-smi stand-in', () => {
  const saved = { ...process.env };
  const children: { kill(): boolean }[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) child.kill();
    for (const key of ['FAKE_SMI_GPU_FILE', 'FAKE_SMI_APPS_FILE', 'FAKE_SMI_DELAY_MS']) {
      if (saved[key] === undefined) delete process.env[key];
      else process.env[key] = saved[key];
    }
  });

  /**
   * A process the stand-in takes for the server: its program is named *llama-server and
   * it is our child, like a real server is the app's. Named `fake-llama-server` so that
   * llama-server checks elsewhere on the machine do not count it.
   */
  function fakeServer(): number {
    const dir = tempDir();
    const program = path.join(dir, 'fake-llama-server');
    fs.symlinkSync(fs.realpathSync('/bin/sleep'), program);
    const child = spawn(program, ['60'], { stdio: 'ignore' });
    children.push(child);
    return child.pid!;
  }

  it('reads used memory once per GPU before a server exists, summed over every GPU or the chosen ones', async () => {
    process.env.FAKE_SMI_GPU_FILE = 'two-gpus-split.csv';
    const used = await readGpuMemoryOnce(standIn);
    expect([...used!]).toEqual([
      [0, 1024],
      [1, 1212],
    ]);
    expect(usedMibOf(used, null)).toBe(1024 + 1212);
    expect(usedMibOf(used, [1])).toBe(1212);
    expect(usedMibOf(used, [2])).toBeNull();
    expect(await readGpuMemoryOnce(null)).toBeNull();
  });

  it("sums VRAM over GPUs and the server's processes per pass, keeps a ≥ 1 s baseline, and places late readings by their timestamps", async () => {
    process.env.FAKE_SMI_GPU_FILE = 'two-gpus-split.csv';
    process.env.FAKE_SMI_APPS_FILE = 'compute-apps-two-gpus.csv';
    // Every reading reaches the sampler 400 ms after it was taken.
    process.env.FAKE_SMI_DELAY_MS = '400';
    const serverPid = fakeServer();
    const origin = performance.now();
    const clock = () => performance.now() - origin;
    const session = new TelemetrySession({ clock, serverPid, metricsUrl: null, gpuBinary: standIn, beforeLoadUsedMib: 2236 });
    session.start();
    // Asked for 300 ms, as the experiments used to: the floor applies, four readings at the default 250 ms.
    expect(session.minimumBaselineMs).toBe(1000);
    await session.idleBaseline(300);
    const baselineEndedBy = clock();
    expect(baselineEndedBy).toBeGreaterThanOrEqual(1000);
    await delay(300);
    session.markWindowStart();
    await delay(1200);
    session.markWindowEnd();
    await session.stop();
    const summary = session.summary();
    const gpu = summary.gpu!;
    expect(summary.window!.baseline_ms).toBeGreaterThanOrEqual(1000);
    expect(summary.window!.start_ms).toBeGreaterThan(summary.window!.baseline_ms!);
    expect(gpu).toMatchObject({
      name: '2× NVIDIA H100 80GB HBM3',
      gpu_count: 2,
      memory_total_mib: 2 * 81559,
      before_load_used_mib: 2236,
      baseline_used_mib: 1024 + 30000 + 1212 + 20000,
      peak_used_mib: 1024 + 30000 + 1212 + 20000,
      server_used_mib_peak: 30000 + 20000,
      server_used_mib_mean: 30000 + 20000,
      other_processes_vram_mib: 700,
      utilization_pct_mean: 80,
      power_w_mean: 1100,
    });
    expect(gpu.per_gpu!.map((entry) => entry.peak_used_mib)).toEqual([31024, 21212]);
    // Pass counts depend on how fast the stand-in ran, so they are checked against the passes it
    // delivered: the baseline spans its full second of readings, and the window holds at least
    // as many passes as the longest gap between two of them allows (less the readings still
    // under way at the end).
    const passes = Array.from(session.series().find((entry) => entry.series === 'gpu0.memory_used')!.points).filter(
      (_value, index) => index % 2 === 0,
    );
    const baselinePasses = passes.filter((t) => t <= baselineEndedBy);
    expect(baselinePasses.at(-1)! - baselinePasses[0]!).toBeGreaterThanOrEqual(1000);
    expect(gpu.baseline_samples).toBeGreaterThanOrEqual(2);
    const longestGap = Math.max(...passes.slice(1).map((t, index) => t - passes[index]!));
    const windowMs = summary.window!.end_ms! - summary.window!.start_ms!;
    expect(gpu.samples).toBeGreaterThanOrEqual(Math.floor((windowMs - 400) / longestGap));
    expect(gpu.timestamps!.device).toBeGreaterThan(0);
    expect(gpu.timestamps!.arrival).toBe(0);
    expect(summary.contention!.other_gpu_processes).toEqual([{ pid: 4242, command: 'python3', used_mib_max: 700 }]);
  });

  it('counts the idle baseline from start(): time the run spends preparing before it asks is not waited again', async () => {
    const origin = performance.now();
    const clock = () => performance.now() - origin;
    const session = new TelemetrySession({ clock, serverPid: fakeServer(), metricsUrl: null, gpuBinary: standIn });
    session.start();
    // The run tokenizes its workload meanwhile: the GPU is idle, and the sampler has started.
    const preparing = 900;
    await delay(preparing);
    const asked = clock();
    await session.idleBaseline();
    const waited = clock() - asked;
    session.markWindowStart();
    await delay(300);
    session.markWindowEnd();
    await session.stop();
    const summary = session.summary();
    // Still a full second of readings (the loop's own start included), but not a second more after the call.
    expect(summary.window!.baseline_ms).toBeGreaterThanOrEqual(session.minimumBaselineMs);
    expect(waited).toBeLessThan(session.minimumBaselineMs);
    expect(summary.gpu!.baseline_samples).toBeGreaterThanOrEqual(2);
  });

  it('counts the baseline in readings where they are fast: at a 100 ms interval it spans four of them, not a second, unless asked for more', async () => {
    const origin = performance.now();
    const clock = () => performance.now() - origin;
    const fast = new TelemetrySession({ clock, serverPid: fakeServer(), metricsUrl: null, gpuBinary: standIn, intervalMs: 100 });
    expect(fast.minimumBaselineMs).toBe(BASELINE_INTERVALS * 100);
    fast.start();
    await fast.idleBaseline();
    fast.markWindowStart();
    fast.markWindowEnd();
    await fast.stop();
    const baselineMs = fast.summary().window!.baseline_ms!;
    expect(baselineMs).toBeGreaterThanOrEqual(400);
    // It ends on the reading that completes four intervals from the first, whenever the stand-in (a Node process) got
    // started: within an interval and some scheduling of it. A one-second floor would end 0.6 s later unless the first
    // reading came that late anyway.
    const firstReading = fast.series().find((entry) => entry.series === 'gpu0.memory_used')!.points[0]!;
    // (Only an upper bound: a reading is placed by nvidia-smi's own timestamp, which a busy machine can put some ms late.)
    expect(baselineMs - firstReading).toBeLessThan(400 + 250);
    expect(fast.summary().gpu!.baseline_samples).toBeGreaterThanOrEqual(BASELINE_INTERVALS);

    const asked = new TelemetrySession({ clock, serverPid: null, metricsUrl: null, gpuBinary: standIn, intervalMs: 100 });
    asked.start();
    await asked.idleBaseline(700);
    asked.markWindowStart();
    asked.markWindowEnd();
    await asked.stop();
    expect(asked.summary().window!.baseline_ms).toBeGreaterThanOrEqual(700);
  });

  it('reads nvidia-smi once more at the end of a window that its loop left without a sample', async () => {
    const origin = performance.now();
    const clock = () => performance.now() - origin;
    // A 3 s loop: after its second reading closes the baseline, a 200 ms window falls between two readings.
    const session = new TelemetrySession({ clock, serverPid: null, metricsUrl: null, gpuBinary: standIn, intervalMs: 3000 });
    session.start();
    await session.idleBaseline(1000);
    session.markWindowStart();
    await delay(200);
    session.markWindowEnd();
    await session.stop();
    const gpu = session.summary().gpu!;
    // The stand-in's one GPU (one-gpu.csv): 5120 MiB used, 87 % busy, 250.5 W, read once more at the window's end.
    expect(gpu).toMatchObject({ samples: 1, peak_used_mib: 5120, utilization_pct_mean: 87, power_w_mean: 250.5 });
    expect(gpu.sampling_notes ?? []).toEqual([]);
  });

  it('counts only the GPUs the profile chose; the other GPU stays in per_gpu as other activity', async () => {
    process.env.FAKE_SMI_GPU_FILE = 'two-gpus-split.csv';
    process.env.FAKE_SMI_APPS_FILE = 'compute-apps-two-gpus.csv';
    const serverPid = fakeServer();
    const session = await measureOneWindow(
      { serverPid, metricsUrl: null, gpuBinary: standIn, gpuIndexes: [1], beforeLoadUsedMib: 1212 },
      800,
    );
    const summary = session.summary();
    const gpu = summary.gpu!;
    // GPU 1 alone: 1212 MiB before load + 20000 of the server's, 70 % busy, 500 W.
    expect(gpu).toMatchObject({
      name: 'NVIDIA H100 80GB HBM3',
      gpu_count: 2,
      chosen_indexes: [1],
      memory_total_mib: 81559,
      baseline_used_mib: 21212,
      peak_used_mib: 21212,
      server_used_mib_peak: 20000,
      other_processes_vram_mib: 700,
      utilization_pct_mean: 70,
      power_w_mean: 500,
    });
    expect(gpu.per_gpu!.map((entry) => [entry.index, entry.peak_used_mib])).toEqual([
      [0, 31024],
      [1, 21212],
    ]);
    expect(summary.energy!.per_gpu!.map((entry) => entry.index)).toEqual([0, 1]);
    expect(summary.energy!.joules).toBeCloseTo(summary.energy!.per_gpu![1]!.joules!, 6);
  });

  it('takes no idle baseline where no GPU tool exists: it would have nothing to sample, and every run would wait for it', async () => {
    const savedPath = process.env.PATH;
    // A PATH with no nvidia-smi, amd-smi or ioreg on it.
    process.env.PATH = tempDir();
    try {
      const origin = performance.now();
      const session = new TelemetrySession({ clock: () => performance.now() - origin, serverPid: null, metricsUrl: null, gpuBinary: null });
      session.start();
      await session.idleBaseline(1000);
      session.markWindowStart();
      session.markWindowEnd();
      await session.stop();
      const summary = session.summary();
      expect(summary.gpu).toBeNull();
      expect(summary.gpu_unavailable_reason).toMatch(/neither nvidia-smi, amd-smi nor ioreg found/);
      expect(summary.window!.baseline_ms).toBe(0);
    } finally {
      process.env.PATH = savedPath;
    }
  });

  it("carries amd-smi's reasons for missing figures into the run: an APU's usage and power are N/A", async () => {
    // No nvidia-smi: the amd-smi stand-in is found on the PATH, answering as the captured APU did.
    const amdDir = path.join(__dirname, '..', 'fixtures', 'nvidia-smi', 'amd-bin');
    const savedPath = process.env.PATH;
    process.env.PATH = `${amdDir}:${savedPath}`;
    process.env.FAKE_AMD_FILE = 'amd-smi-metric-apu-usage-na.json';
    try {
      const session = await measureOneWindow({ serverPid: null, metricsUrl: null, gpuBinary: null }, 1200);
      const gpu = session.summary().gpu!;
      expect(gpu).toMatchObject({ peak_used_mib: 96, utilization_pct_mean: null, power_w_mean: null });
      expect(gpu.sampling_notes).toEqual([
        'GPU 0: amd-smi reports usage as "N/A", so no utilization',
        'GPU 0: amd-smi reports power.socket_power as "N/A", so no power or energy',
      ]);
    } finally {
      process.env.PATH = savedPath;
      delete process.env.FAKE_AMD_FILE;
    }
  });

  it('without timestamps (a fixed stamp from another time) falls back to arrival and still sums one GPU', async () => {
    process.env.FAKE_SMI_GPU_FILE = 'one-gpu.csv';
    process.env.FAKE_SMI_APPS_FILE = 'compute-apps-named.csv';
    const serverPid = fakeServer();
    const session = await measureOneWindow({ serverPid, metricsUrl: null, gpuBinary: standIn }, 800);
    const gpu = session.summary().gpu!;
    expect(gpu).toMatchObject({
      name: 'NVIDIA GeForce RTX 4090',
      gpu_count: 1,
      baseline_used_mib: 5120,
      peak_used_mib: 5120,
      server_used_mib_peak: 812,
      other_processes_vram_mib: 300,
      before_load_used_mib: null,
    });
    expect(gpu.timestamps!.arrival).toBeGreaterThan(0);
  });
});
