import { memorySize } from '../../../shared/memory-size';
import type { PlannedCandidate } from '../../../shared/contract/models';
import { fileWeightBytes, type ModelShape } from './model-shape';
import { estimateMemory, type MemoryEstimate, type PlanSettings } from './memory-estimate';

/** One GPU as the plan sees it: memory now free, and its datasheet bandwidth where known. */
export interface PlanGpu {
  index: number;
  name: string;
  totalBytes: number;
  freeBytes: number;
  bandwidthGbPerS: number | null;
}

export interface PlanHost {
  totalBytes: number;
  /** What the kernel says can be allocated without swapping (MemAvailable). */
  availableBytes: number;
  bandwidthGbPerS: number | null;
}

/**
 * Per GPU, memory a process takes beyond llama.cpp's own buffers (the CUDA or ROCm context,
 * library workspaces): an allowance, not a measurement, kept out of every "fits".
 */
export const RUNTIME_ALLOWANCE_BYTES = 512 * 2 ** 20;

/** The fit as the contract carries it (docs/METRICS.md, "Model plan"). */
export type Fit = NonNullable<PlannedCandidate['fit']>;

function gpuOverhead(gpus: readonly PlanGpu[], estimate: MemoryEstimate): number {
  return gpus.length * (estimate.computeBytes + RUNTIME_ALLOWANCE_BYTES);
}

/** Every layer and the output on the GPUs (llama.cpp splits the layers across them by free memory). */
function fullOffloadBytes(estimate: MemoryEstimate, gpus: readonly PlanGpu[]): number {
  return estimate.offloadableBytes + estimate.kvBytes + gpuOverhead(gpus, estimate);
}

/** Everything on the CPU: one copy of each tensor, the cache and one compute buffer. */
function cpuOnlyBytes(shape: ModelShape, estimate: MemoryEstimate): number {
  return fileWeightBytes(shape) + estimate.kvBytes + estimate.computeBytes;
}

/**
 * The largest context per slot that still fits fully: the need only grows with the context,
 * so a binary search over multiples of 256 finds it.
 */
export function largestFullContext(shape: ModelShape, settings: PlanSettings, gpus: readonly PlanGpu[]): number | null {
  if (gpus.length === 0) return null;
  const free = gpus.reduce((sum, gpu) => sum + gpu.freeBytes, 0);
  const fits = (context: number) => fullOffloadBytes(estimateMemory(shape, { ...settings, contextPerSlot: context }), gpus) <= free;
  const step = 256;
  let low = 0;
  let high = Math.max(1, Math.ceil((shape.contextTrain ?? 1 << 20) / step));
  if (!fits(step)) return null;
  if (fits(high * step)) return high * step;
  low = 1;
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (fits(middle * step)) low = middle;
    else high = middle;
  }
  return low * step;
}

export function planFit(shape: ModelShape, settings: PlanSettings, gpus: readonly PlanGpu[], host: Pick<PlanHost, 'availableBytes'>): Fit {
  const estimate = estimateMemory(shape, settings);
  const layersTotal = shape.nLayer + 1;
  const free = gpus.reduce((sum, gpu) => sum + gpu.freeBytes, 0);
  const largest = largestFullContext(shape, settings, gpus);
  const full = fullOffloadBytes(estimate, gpus);
  if (gpus.length > 0 && full <= free)
    return {
      verdict: 'fits',
      layersOnGpu: layersTotal,
      layersTotal,
      gpuBytes: full,
      hostBytes: estimate.hostWeightBytes,
      largestFullContext: largest,
      detail: `every layer on the GPU${gpus.length > 1 ? 's' : ''}: needs ${memorySize(full)} of ${memorySize(free)} free`,
    };
  // llama.cpp offloads the last blocks first; each takes its weights and its share of the cache.
  const budget = free - gpuOverhead(gpus, estimate);
  let blocksOnGpu = 0;
  let layerBytesOnGpu = 0;
  for (let layer = shape.nLayer - 1; layer >= 0 && gpus.length > 0; layer--) {
    const bytes = shape.layerBytes[layer]! + estimate.kvBytesPerLayer;
    if (layerBytesOnGpu + bytes > budget) break;
    layerBytesOnGpu += bytes;
    blocksOnGpu++;
  }
  const gpuBytes = layerBytesOnGpu + gpuOverhead(gpus, estimate);
  if (blocksOnGpu > 0) {
    const hostBytes = cpuOnlyBytes(shape, estimate) - layerBytesOnGpu;
    const verdict = hostBytes <= host.availableBytes ? 'partial' : 'no';
    return {
      verdict,
      layersOnGpu: blocksOnGpu,
      layersTotal,
      gpuBytes,
      hostBytes,
      largestFullContext: largest,
      detail:
        verdict === 'partial'
          ? `${blocksOnGpu} of ${layersTotal} layers on the GPU${gpus.length > 1 ? 's' : ''} (${memorySize(free)} free), the rest in ${memorySize(hostBytes)} of RAM`
          : `${blocksOnGpu} of ${layersTotal} layers fit on the GPU, but the rest needs ${memorySize(hostBytes)} of RAM and ${memorySize(host.availableBytes)} is available`,
    };
  }
  const hostBytes = cpuOnlyBytes(shape, estimate);
  const why = gpus.length === 0 ? 'no GPU' : `not one layer fits in the ${memorySize(free)} free on the GPU`;
  return {
    verdict: hostBytes <= host.availableBytes ? 'cpu' : 'no',
    layersOnGpu: 0,
    layersTotal,
    gpuBytes: 0,
    hostBytes,
    largestFullContext: largest,
    detail:
      hostBytes <= host.availableBytes
        ? `${why}: runs on the CPU in ${memorySize(hostBytes)} of RAM (${memorySize(host.availableBytes)} available)`
        : `${why}, and the CPU would need ${memorySize(hostBytes)} of RAM with ${memorySize(host.availableBytes)} available`,
  };
}
