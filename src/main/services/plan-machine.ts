import os from 'node:os';
import { gpuPeakBandwidth } from '../metrics/gpu-peak-bandwidth';
import type { PlanMachine } from '../models/plan/plan-models';
import { readMemAvailable } from '../telemetry/host-memory';
import { readGpuMemorySnapshot } from '../telemetry/gpu-memory-snapshot';
import { reachableMemoryRead } from '../telemetry/memory-read-probe';

/** A GPU's datasheet bandwidth by its name, and where the figure comes from or why there is none. */
function datasheetBandwidth(name: string): { bandwidthGbPerS: number | null; bandwidthSource: string } {
  const { peak, reason } = gpuPeakBandwidth(name);
  return { bandwidthGbPerS: peak?.gb_per_s ?? null, bandwidthSource: peak ? `datasheet: ${peak.label}` : (reason ?? 'unknown') };
}

/** This machine: each GPU's free memory now, the RAM the kernel says is available, and the cached read probe. */
export async function readPlanMachine(cacheDir: string): Promise<PlanMachine> {
  const snapshot = await readGpuMemorySnapshot();
  let probe: Promise<{ gbPerS: number | null; source: string }> | null = null;
  return {
    gpus: snapshot.gpus.map((gpu) => ({
      index: gpu.index,
      name: gpu.name,
      totalBytes: gpu.totalMib * 2 ** 20,
      freeBytes: Math.max(0, gpu.totalMib - gpu.usedMib) * 2 ** 20,
      ...datasheetBandwidth(gpu.name),
    })),
    host: { totalBytes: os.totalmem(), availableBytes: (await readMemAvailable()) ?? os.freemem() },
    gpuSource: snapshot.source,
    hostBandwidth: () =>
      (probe ??= reachableMemoryRead(Math.max(1, os.availableParallelism()), cacheDir).then(
        (result) => ({ gbPerS: result.gb_per_s, source: `memory-read probe with ${result.threads} threads, ${result.measured_at}` }),
        (error: Error) => ({ gbPerS: null, source: `the memory-read probe failed: ${error.message}` }),
      )),
  };
}
