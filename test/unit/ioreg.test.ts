import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAC_POWER_NOTE, parseIoregAccelerators } from '../../src/main/telemetry/ioreg-parse';
import { gpuPeakBandwidth } from '../../src/main/metrics/gpu-peak-bandwidth';
import { measureOneWindow } from '../support/telemetry-window';
import { readCaptured } from '../support/captured';
import { explainLlamaLog } from '../../src/main/engines/llamacpp/log-explain';
import { telemetryLines } from '../../src/main/cli/summary-table';

const captured = (name: string) =>
  fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'captured', 'ioreg', name), 'utf8').split('# ---\n')[1]!;
const MIB = 2 ** 20;

describe('Apple GPUs through ioreg (no sudo)', () => {
  it('captured M4 Pro: the whole node, its 44 KB legend line and the "(driver)" key before the one that counts', () => {
    const { samples, notes } = parseIoregAccelerators(captured('ioaccelerator-m4-pro-t6040-agxg16x-full-node.txt'), 7);
    expect(samples).toEqual([
      expect.objectContaining({
        t: 7,
        index: 0,
        name: 'Apple M4 Pro (16-core GPU)',
        utilizationPct: 100,
        memoryUsedMib: 10977263616 / MIB,
        // Unified memory has no size of its own, and power is never a zero.
        memoryTotalMib: null,
        powerW: null,
      }),
    ]);
    expect(notes).toEqual([MAC_POWER_NOTE]);
  });

  it('captured M1 Pro/Max: no model line in the excerpt, so the accelerator class names it', () => {
    const { samples } = parseIoregAccelerators(captured('ioaccelerator-m1-pro-max-t6000-agxg13x.txt'), 0);
    expect(samples).toEqual([expect.objectContaining({ name: 'AGXAcceleratorG13X', utilizationPct: 2, memoryUsedMib: 340983808 / MIB })]);
  });

  it('constructed: an Intel Mac with an AMD GPU (vram bytes, an Accum dictionary first) and a node without statistics', () => {
    const text = [
      '+-o AMDRadeonX6000_AMDNavi14GraphicsAccelerator  <class AMDRadeonX6000_AMDNavi14GraphicsAccelerator, id 0x1, registered>',
      '    {',
      '      "PerformanceStatisticsAccum" = {"Device Utilization %"=99,"inUseVidMemoryBytes"=1}',
      '      "PerformanceStatistics" = {"inUseVidMemoryBytes"=435888128,"vramFreeBytes"=7461748736,"Device Utilization %"=12}',
      '    }',
      '+-o IntelAccelerator  <class IntelAccelerator, id 0x2, registered>',
      '    {',
      '      "IOClass" = "IntelAccelerator"',
      '    }',
    ].join('\n');
    const { samples, notes } = parseIoregAccelerators(text, 0);
    expect(samples).toEqual([
      expect.objectContaining({
        index: 0,
        name: 'AMDRadeonX6000_AMDNavi14GraphicsAccelerator',
        utilizationPct: 12,
        memoryUsedMib: 435888128 / MIB,
        memoryTotalMib: (435888128 + 7461748736) / MIB,
      }),
    ]);
    expect(notes).toEqual(['GPU 1 (IntelAccelerator): ioreg shows no PerformanceStatistics, so no utilization or memory', MAC_POWER_NOTE]);
  });

  it("has each Apple chip's bandwidth by its exact name, and the GPU core count where one chip has two", () => {
    const peak = (name: string) => gpuPeakBandwidth(name).peak?.gb_per_s ?? null;
    expect(peak('Apple M4 Pro (16-core GPU)')).toBe(273);
    expect(peak('Apple M4 Max (40-core GPU)')).toBe(546);
    expect(peak('Apple M4 Max (32-core GPU)')).toBe(410);
    expect(peak('Apple M3 Max (30-core GPU)')).toBe(300);
    expect(peak('Apple M4 (10-core GPU)')).toBe(120);
    expect(peak('Apple M1')).toBe(68.25);
    expect(peak('Apple M1 Ultra (64-core GPU)')).toBe(800);
    // No core count, no guess between two figures.
    expect(peak('Apple M4 Max')).toBeNull();
  });

  it('has the datasheet figure of every M1 to M4 chip, split by GPU cores where Apple gives two', () => {
    const figures: [string, number][] = [
      ['Apple M1', 68.25],
      ['Apple M1 Pro', 200],
      ['Apple M1 Max', 400],
      ['Apple M1 Ultra', 800],
      ['Apple M2', 100],
      ['Apple M2 Pro', 200],
      ['Apple M2 Max', 400],
      ['Apple M2 Ultra', 800],
      ['Apple M3', 100],
      ['Apple M3 Pro', 150],
      ['Apple M3 Max (30-core GPU)', 300],
      ['Apple M3 Max (40-core GPU)', 400],
      ['Apple M4', 120],
      ['Apple M4 Pro', 273],
      ['Apple M4 Max (32-core GPU)', 410],
      ['Apple M4 Max (40-core GPU)', 546],
    ];
    for (const [name, gbPerS] of figures) expect(gpuPeakBandwidth(name).peak?.gb_per_s, name).toBe(gbPerS);
    // An M1 Pro is not an M1, nor an M2 Max an M2.
    expect(gpuPeakBandwidth('Apple M2 Max (38-core GPU)').peak?.label).toBe('Apple M2 Max');
  });

  it('takes the chip from what ioreg and the Metal log report, and says why where neither names it', () => {
    // Captured M4 Pro: ioreg's "model" and "gpu-core-count".
    const m4Pro = parseIoregAccelerators(captured('ioaccelerator-m4-pro-t6040-agxg16x-full-node.txt'), 0).samples[0]!.name;
    expect(gpuPeakBandwidth(m4Pro)).toMatchObject({ peak: { gb_per_s: 273, label: 'Apple M4 Pro', kind: 'gpu datasheet' }, reason: null });
    // Captured M1 Pro/Max: only the driver's class, which both chips share: no figure, and why.
    const m1 = parseIoregAccelerators(captured('ioaccelerator-m1-pro-max-t6000-agxg13x.txt'), 0).samples[0]!.name;
    expect(gpuPeakBandwidth(m1)).toEqual({
      peak: null,
      reason: "ioreg names only the GPU driver's class (AGXAcceleratorG13X), not the Apple chip, so its datasheet bandwidth is not known",
    });
    // Captured Metal log of an M2 Pro: the device llama.cpp names.
    const metal = explainLlamaLog(readCaptured('llama-logs/plan-metal-llama2-7b-q4_0-ctx8192-fa0-ollama.log'));
    expect(metal.devices.map((device) => device.name)).toEqual(['Apple M2 Pro']);
    expect(gpuPeakBandwidth(metal.devices[0]!.name).peak).toMatchObject({ gb_per_s: 200, label: 'Apple M2 Pro' });
    // A split chip without its core count, or with one Apple never sold: both figures named, neither taken.
    expect(gpuPeakBandwidth('Apple M4 Max').reason).toBe(
      'Apple M4 Max comes with two memory buses (410 GB/s with the 32-core GPU, 546 GB/s with the 40-core GPU) and its GPU core count was not reported, so no figure is taken',
    );
    expect(gpuPeakBandwidth('Apple M3 Max (35-core GPU)').reason).toMatch(
      /300 GB\/s with the 30-core GPU, 400 GB\/s with the 40-core GPU\) and a 35-core GPU is neither/,
    );
  });

  it('samples through the ioreg stand-in on the PATH: utilization and memory, power and energy said to be missing', async () => {
    const standIn = path.join(__dirname, '..', 'fixtures', 'nvidia-smi', 'ioreg-bin');
    const savedPath = process.env.PATH;
    // No nvidia-smi and no amd-smi: only the stand-in's folder and node.
    process.env.PATH = `${standIn}:${path.dirname(process.execPath)}`;
    try {
      const session = await measureOneWindow({ serverPid: null, metricsUrl: null, gpuBinary: null }, 2200);
      const summary = session.summary();
      expect(summary.gpu).toMatchObject({
        name: 'Apple M4 Pro (16-core GPU)',
        utilization_pct_mean: 100,
        peak_used_mib: 10977263616 / MIB,
        power_w_mean: null,
        sampling_notes: [MAC_POWER_NOTE],
      });
      expect(summary.gpu!.samples).toBeGreaterThanOrEqual(1);
      expect(summary.energy).toMatchObject({ joules: null, reason: MAC_POWER_NOTE });
      // The run's printed summary: power a dash, never 0 or blank, and why, twice (the GPU and the energy).
      const lines = telemetryLines(summary);
      const gpuLine = lines.find((line) => line.startsWith('GPU Apple M4 Pro'))!;
      expect(gpuLine).toMatch(/power — W/);
      expect(gpuLine).not.toMatch(/power 0/);
      expect(lines).toContain(`GPU telemetry: ${MAC_POWER_NOTE}`);
      expect(lines).toContain(`energy: — (${MAC_POWER_NOTE})`);
      expect(MAC_POWER_NOTE).toMatch(/powermetrics, which needs sudo/);
    } finally {
      process.env.PATH = savedPath;
    }
  });
});
