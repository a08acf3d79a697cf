import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAC_POWER_NOTE, parseIoregAccelerators } from '../../src/main/telemetry/ioreg-parse';
import { gpuPeakBandwidth } from '../../src/main/metrics/gpu-peak-bandwidth';
import { measureOneWindow } from '../support/telemetry-window';

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
    } finally {
      process.env.PATH = savedPath;
    }
  });
});
