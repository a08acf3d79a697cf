import type { Fit, PlanGpu, PlanHost } from './fit';
import { layerWeightBytes, type ModelShape } from './model-shape';

export interface SpeedCeiling {
  /** Decode tokens per second one sequence cannot exceed at an empty context. */
  tokensPerS: number;
  /** Weights one decode step reads: every block's (a MoE block's experts in use only) and the output projection. */
  bytesPerToken: number;
}

/** A block's bytes one token reads: all of a dense block; of a MoE block's routed experts, used of count. */
function activeLayerBytes(shape: ModelShape, layer: number): number {
  const bytes = shape.layerBytes[layer]!;
  if (!shape.experts || shape.expertBytes === 0) return bytes;
  const expertShare = shape.expertBytes / layerWeightBytes(shape);
  return bytes * (1 - expertShare * (1 - shape.experts.used / shape.experts.count));
}

/**
 * Decode is bound by memory bandwidth: a step reads every weight it passes through once, so
 * one sequence's tokens/s cannot exceed bandwidth ÷ those bytes. Layers on the GPUs are read at
 * the GPUs' speed (shared out as llama.cpp splits them, by free memory), the rest at the host's.
 * The KV cache read grows with the context and is left out: this is the ceiling at its start.
 */
export function speedCeiling(shape: ModelShape, fit: Fit, gpus: readonly PlanGpu[], host: PlanHost): SpeedCeiling | { reason: string } {
  if (fit.verdict === 'no') return { reason: 'does not fit' };
  const blocksOnGpu = Math.min(fit.layersOnGpu, shape.nLayer);
  let gpuBytes = 0;
  let hostBytes = 0;
  for (let layer = 0; layer < shape.nLayer; layer++) {
    if (layer >= shape.nLayer - blocksOnGpu) gpuBytes += activeLayerBytes(shape, layer);
    else hostBytes += activeLayerBytes(shape, layer);
  }
  if (fit.layersOnGpu > shape.nLayer) gpuBytes += shape.headBytes;
  else hostBytes += shape.headBytes;
  let seconds = 0;
  if (gpuBytes > 0) {
    const unknown = gpus.find((gpu) => gpu.bandwidthGbPerS === null);
    if (unknown) return { reason: `no datasheet bandwidth for ${unknown.name}` };
    const free = gpus.reduce((sum, gpu) => sum + gpu.freeBytes, 0);
    for (const gpu of gpus) seconds += (gpuBytes * (gpu.freeBytes / free)) / (gpu.bandwidthGbPerS! * 1e9);
  }
  if (hostBytes > 0) {
    if (host.bandwidthGbPerS === null) return { reason: 'the host memory bandwidth is not known (the read probe did not run)' };
    seconds += hostBytes / (host.bandwidthGbPerS * 1e9);
  }
  return { tokensPerS: 1 / seconds, bytesPerToken: gpuBytes + hostBytes };
}
