import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import type { GpuSample } from '../../src/shared/contract/telemetry';
import { parseGpuLine } from '../../src/main/telemetry/nvidia-smi-parse';
import { integratePower } from '../../src/main/telemetry/power-integral';
import { findRaplDomains, RaplMeter } from '../../src/main/telemetry/rapl';
import { TelemetrySession } from '../../src/main/telemetry/telemetry-session';
import { isSlowdown, throttleReasonNames } from '../../src/main/telemetry/throttle-reasons';
import { energyLine } from '../../src/shared/energy-bandwidth-lines';
import {
  engineOffTheGpu,
  gpuEnergyAsContext,
  gpuWindowEnergy,
  throttleSummary,
  withEnergyPerWork,
} from '../../src/main/telemetry/window-energy';
import { useTempDirs } from '../support/temp';
import { measureOneWindow } from '../support/telemetry-window';

const tempDir = useTempDirs();
// Fixtures constructed from nvidia-smi's documented format, not captured on a GPU (see test/fixtures/nvidia-smi/README.md).
const fixtures = path.join(import.meta.dirname, '..', 'fixtures', 'nvidia-smi');
const fixture = (name: string) => fs.readFileSync(path.join(fixtures, name), 'utf8');
const standIn = path.join(fixtures, 'bin', 'nvidia-smi');
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function sample(index: number, t: number, powerW: number | null, extra: Partial<GpuSample> = {}): GpuSample {
  return {
    t,
    index,
    uuid: null,
    name: 'NVIDIA H100 80GB HBM3',
    memoryUsedMib: 1,
    memoryTotalMib: 2,
    utilizationPct: 90,
    memoryUtilizationPct: 50,
    temperatureC: 60,
    powerW,
    smClockMhz: 1980,
    pstate: 'P0',
    memClockMhz: 2619,
    throttleReasons: 0,
    ...extra,
  };
}

describe('the memory clock and throttle reasons in nvidia-smi lines', () => {
  it('reads clocks.mem and the reasons bitmask (hex) from the constructed lines', () => {
    const line = fixture('throttled-gpu.csv')
      .trim()
      .replace('{TIMESTAMP}', '2026/11/30 01:00:00.000')
      .replace('{USED:1024:30000}', '31024');
    expect(parseGpuLine(line, 0)).toMatchObject({ memClockMhz: 2619, throttleReasons: 0x24, smClockMhz: 1755, powerW: 699.1 });
    const [, unsupported] = fixture('several-gpus.csv')
      .trim()
      .split('\n')
      .map((text) => parseGpuLine(text, 0));
    expect(unsupported).toMatchObject({ memClockMhz: null, throttleReasons: null });
  });

  it('still reads lines in the form the query had before the two columns were added', () => {
    expect(parseGpuLine(fixture('one-gpu-before-clocks.csv').trim(), 0)).toMatchObject({
      powerW: 250.5,
      pstate: 'P2',
      memClockMhz: null,
      throttleReasons: null,
    });
  });

  it('names the reasons; idle and clock settings are not a slowdown', () => {
    expect(throttleReasonNames(0x24)).toEqual(['sw_power_cap', 'sw_thermal_slowdown']);
    expect(throttleReasonNames(0xc8)).toEqual(['hw_slowdown', 'hw_thermal_slowdown', 'hw_power_brake_slowdown']);
    expect(throttleReasonNames(0x1001)).toEqual(['gpu_idle', 'unknown_0x1000']);
    expect(isSlowdown(0x1 | 0x2 | 0x10 | 0x100)).toBe(false);
    expect(isSlowdown(0x4)).toBe(true);
  });

  it('summarizes throttling over the window: flag, reasons, share of readings', () => {
    const readings = [
      sample(0, 0, 1, { throttleReasons: 0 }),
      sample(0, 1, 1, { throttleReasons: 0x4 }),
      sample(0, 2, 1, { throttleReasons: 0x20 }),
      sample(0, 3, 1, { throttleReasons: 0x1 }),
    ];
    expect(throttleSummary(readings)).toMatchObject({
      throttled: true,
      reasons: ['sw_power_cap', 'sw_thermal_slowdown'],
      share_of_samples: 0.5,
      samples: 4,
    });
    const old = throttleSummary([sample(0, 0, 1, { throttleReasons: undefined })]);
    expect(old.throttled).toBeNull();
    expect(old.reason).toMatch(/no throttle reasons/);
  });
});

describe('energy by the trapezoid rule', () => {
  it('integrates power between readings inside the window and says what it covers', () => {
    // 100 W then 200 W over 1 s, then 200 W for 0.5 s: 150 J + 100 J.
    const readings = [
      { t: -100, powerW: 999 },
      { t: 0, powerW: 100 },
      { t: 1000, powerW: 200 },
      { t: 1500, powerW: 200 },
      { t: 3000, powerW: 999 },
    ];
    expect(integratePower(readings, 0, 2000)).toEqual({ joules: 250, coveredMs: 1500, readings: 3 });
    // A reading without power splits the series: neither interval next to it counts.
    expect(
      integratePower(
        [
          { t: 0, powerW: 100 },
          { t: 500, powerW: null },
          { t: 1000, powerW: 100 },
          { t: 2000, powerW: 300 },
        ],
        0,
        2000,
      ),
    ).toEqual({
      joules: 200,
      coveredMs: 1000,
      readings: 3,
    });
    expect(integratePower([{ t: 0, powerW: 100 }], 0, 2000).joules).toBeNull();
  });

  it('sums the run GPUs, keeps every GPU per GPU, and divides by work over the whole window', () => {
    const samples = [0, 250, 500, 750, 1000].flatMap((t) => [sample(0, t, 400), sample(1, t, 100), sample(2, t, 50)]);
    const energy = gpuWindowEnergy(samples, new Set([0, 1]), { start: 0, end: 1000 }, 'nvidia-smi power.draw');
    expect(energy).toMatchObject({ joules: 500, window_ms: 1000, covered_ms: 1000, coverage: 1, reason: null });
    expect(energy.per_gpu!.map((gpu) => gpu.joules)).toEqual([400, 100, 50]);
    const perWork = withEnergyPerWork(energy, { completedRequests: 4, outputTokens: 250 });
    expect(perWork).toMatchObject({ joules_per_request: 125, joules_per_output_token: 2, output_tokens_per_joule: 0.5 });
    // Readings covering half the window: the ratios use the covered mean power over the whole window.
    const half = gpuWindowEnergy(
      samples.filter((s) => s.t <= 500),
      new Set([0]),
      { start: 0, end: 1000 },
      'nvidia-smi power.draw',
    );
    expect(half).toMatchObject({ joules: 200, coverage: 0.5 });
    expect(withEnergyPerWork(half, { completedRequests: 1, outputTokens: 0 })).toMatchObject({
      joules_window: 400,
      joules_per_request: 400,
      joules_per_output_token: null,
    });
  });

  it("keeps a GPU's energy as context only, never per token, when the engine ran on the CPU", () => {
    const samples = [0, 250, 500, 750, 1000].map((t) => sample(0, t, 78));
    const energy = gpuWindowEnergy(samples, new Set([0]), { start: 0, end: 1000 }, 'nvidia-smi power.draw');
    const cpuEngine = engineOffTheGpu({ state: 'none', backend: 'cpu' });
    expect(cpuEngine).toMatch(/^not this run's: a cpu engine with nothing offloaded ran on the CPU/);
    const context = withEnergyPerWork(gpuEnergyAsContext(energy, cpuEngine!), { completedRequests: 4, outputTokens: 452 });
    // The H200-at-idle case: 78 J over the window divided by tokens the CPU made would read 0.1725 J/token.
    expect(context).toMatchObject({
      joules: 78,
      context_only: true,
      reason: cpuEngine,
      joules_per_request: null,
      joules_per_output_token: null,
      output_tokens_per_joule: null,
    });
    expect(energyLine(context)).toBe(`energy: — (${cpuEngine}: 78.0 J from nvidia-smi power.draw)`);
    // A GPU engine, or an offload nobody recorded, keeps its energy; RAPL is the CPU's own and stays too.
    expect(engineOffTheGpu({ state: 'full', backend: 'cuda' })).toBeNull();
    expect(engineOffTheGpu({ state: 'partial', backend: 'cuda' })).toBeNull();
    expect(engineOffTheGpu(null)).toBeNull();
    const rapl = { ...energy, source: 'rapl' as const };
    expect(gpuEnergyAsContext(rapl, cpuEngine!)).toBe(rapl);
  });

  it('is null with the reason when a run GPU has no power readings', () => {
    const samples = [0, 500, 1000].map((t) => sample(0, t, null));
    const energy = gpuWindowEnergy(samples, new Set([0]), { start: 0, end: 1000 }, 'nvidia-smi power.draw');
    expect(energy.joules).toBeNull();
    expect(energy.reason).toMatch(/GPU 0: fewer than two power readings/);
  });
});

describe('CPU package energy from RAPL', () => {
  function powercap(zones: Record<string, { name: string; energy: number; range: number }>): string {
    const root = tempDir();
    for (const [zone, value] of Object.entries(zones)) {
      fs.mkdirSync(path.join(root, zone));
      fs.writeFileSync(path.join(root, zone, 'name'), `${value.name}\n`);
      fs.writeFileSync(path.join(root, zone, 'energy_uj'), `${value.energy}\n`);
      fs.writeFileSync(path.join(root, zone, 'max_energy_range_uj'), `${value.range}\n`);
    }
    return root;
  }
  const setEnergy = (root: string, zone: string, energy: number) => fs.writeFileSync(path.join(root, zone, 'energy_uj'), `${energy}\n`);

  it('adds the packages, leaves out subzones and psys, and handles a counter wrap', () => {
    const root = powercap({
      'intel-rapl:0': { name: 'package-0', energy: 900_000_000, range: 1_000_000_000 },
      'intel-rapl:1': { name: 'package-1', energy: 5_000_000, range: 1_000_000_000 },
      'intel-rapl:0:0': { name: 'core', energy: 1, range: 1_000_000_000 },
      'intel-rapl:2': { name: 'psys', energy: 1, range: 1_000_000_000 },
    });
    expect(findRaplDomains(root).domains.map((domain) => domain.name)).toEqual(['package-0', 'package-1']);
    const meter = new RaplMeter(root);
    meter.start();
    // package-0 wraps: 900 J → 1000 J → 0 → 50 J is 150 J.
    setEnergy(root, 'intel-rapl:0', 50_000_000);
    setEnergy(root, 'intel-rapl:1', 25_000_000);
    meter.read();
    expect(meter.result()).toEqual({ joules: 170, domains: ['package-0', 'package-1'], reason: null });
  });

  it('says why when there are no counters', () => {
    const meter = new RaplMeter(path.join(tempDir(), 'absent'));
    meter.start();
    expect(meter.result().joules).toBeNull();
    expect(meter.result().reason).toMatch(/absent: no RAPL energy counters/);
  });

  it('is what a session reports for energy without a GPU', async () => {
    const root = powercap({ 'intel-rapl:0': { name: 'package-0', energy: 1_000_000, range: 1_000_000_000 } });
    // No GPU tool at all: an amd-smi or ioreg on this machine's PATH would otherwise answer for the GPU.
    const machinePath = process.env.PATH;
    process.env.PATH = tempDir();
    onTestFinished(() => {
      process.env.PATH = machinePath;
    });
    const origin = performance.now();
    const session = new TelemetrySession({
      clock: () => performance.now() - origin,
      serverPid: null,
      metricsUrl: null,
      gpuBinary: null,
      powercapRoot: root,
    });
    session.start();
    session.markWindowStart();
    setEnergy(root, 'intel-rapl:0', 31_000_000);
    await delay(50);
    session.markWindowEnd();
    await session.stop();
    const summary = session.summary();
    expect(summary.gpu_unavailable_reason).toMatch(/neither nvidia-smi, amd-smi nor ioreg found/);
    expect(summary.energy).toMatchObject({ source: 'rapl', joules: 30, coverage: 1, rapl_domains: ['package-0'] });
    expect(summary.throttle!.throttled).toBeNull();
  });
});

describe('a telemetry session on a throttled GPU (nvidia-smi stand-in)', () => {
  const saved = { ...process.env };
  const children: { kill(): boolean }[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) child.kill();
    for (const key of ['FAKE_SMI_GPU_FILE', 'FAKE_SMI_APPS_FILE', 'FAKE_SMI_MODE']) {
      if (saved[key] === undefined) delete process.env[key];
      else process.env[key] = saved[key];
    }
  });

  it('reports energy, memory clock and the slowdown reasons over the window', async () => {
    process.env.FAKE_SMI_GPU_FILE = 'throttled-gpu.csv';
    process.env.FAKE_SMI_APPS_FILE = 'compute-apps-two-gpus.csv';
    const program = path.join(tempDir(), 'fake-llama-server');
    fs.symlinkSync(fs.realpathSync('/bin/sleep'), program);
    const child = spawn(program, ['60'], { stdio: 'ignore' });
    children.push(child);
    const session = await measureOneWindow({ serverPid: child.pid!, metricsUrl: null, gpuBinary: standIn }, 1500);
    const summary = session.summary();
    expect(summary.throttle).toMatchObject({
      throttled: true,
      reasons: ['sw_power_cap', 'sw_thermal_slowdown'],
      share_of_samples: 1,
      mem_clock_mhz_mean: 2619,
    });
    const energy = summary.energy!;
    expect(energy.source).toBe('nvidia-smi power.draw');
    // Constant 699.1 W: the integral is that power over the covered span.
    expect(energy.joules).toBeCloseTo((699.1 * energy.covered_ms!) / 1000, 6);
    // The covered span is exactly that of the power readings inside the window, however many a
    // busy machine let the stand-in deliver: nothing is extrapolated past the first or last.
    const { start_ms: start, end_ms: end } = summary.window!;
    const points = session.series().find((entry) => entry.series === 'gpu0.power')!.points;
    const inside = Array.from(points)
      .filter((_value, index) => index % 2 === 0)
      .filter((t) => t >= start! && t <= end!);
    expect(energy.covered_ms).toBeCloseTo(inside.at(-1)! - inside[0]!, 6);
    expect(energy.coverage).toBeCloseTo(energy.covered_ms! / (end! - start!), 9);
    expect(energy.coverage).toBeLessThanOrEqual(1);
  });

  it('samples without the clock fields when the driver refuses them', async () => {
    process.env.FAKE_SMI_GPU_FILE = 'one-gpu-live.csv';
    process.env.FAKE_SMI_MODE = 'refuse-clocks';
    const session = await measureOneWindow({ serverPid: null, metricsUrl: null, gpuBinary: standIn }, 1000);
    const summary = session.summary();
    expect(summary.gpu).toMatchObject({ name: 'NVIDIA GeForce RTX 4090', power_w_mean: 250.5, sampling_failure: null });
    expect(summary.energy!.joules).toBeGreaterThan(0);
    expect(summary.throttle).toMatchObject({ throttled: null, sm_clock_mhz_mean: 2520, mem_clock_mhz_mean: null });
    expect(summary.throttle!.reason).toMatch(/carry no throttle reasons/);
  });
});
