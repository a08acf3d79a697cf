import type { GpuOffload } from './contract/runs';
import { hostShare, placementText, weightsBeyondEmbeddingInHost, type WeightPlacement } from './weight-placement';

/** Above this share of the weights in host memory a GPU run is mostly a host-memory run. */
const MOSTLY_HOST = 0.5;

function hostWarning(placement: WeightPlacement): string | null {
  const share = hostShare(placement);
  if (share <= MOSTLY_HOST || placement.gpu_mib === 0) return null;
  return `MOST WEIGHTS ARE IN HOST MEMORY: ${placement.host_mib.toFixed(0)} of ${(placement.host_mib + placement.gpu_mib).toFixed(0)} MiB (${(share * 100).toFixed(0)} %) (${placementText(placement)}); every decoded token reads them over host memory, so this measures the CPU side more than the GPU. Offload more layers (gpuLayers), fewer MoE experts on the CPU (--n-cpu-moe, -ot), or a smaller quantization.`;
}

/**
 * What a GPU backend's log says ran where: full, partial or none by the layers offloaded and the
 * weight bytes per device, with the warning when most weights sit in host memory.
 */
export function offloadByPlacement(
  backend: GpuOffload['backend'],
  layers: GpuOffload['layers'],
  weights: WeightPlacement | null,
): GpuOffload {
  const base = { backend, layers, weights, warning: null };
  if (!layers) return { ...base, state: 'unknown', reason: 'the server log did not say how many layers were offloaded' };
  if (layers.offloaded === 0)
    return { ...base, state: 'none', reason: "no layers were offloaded (the profile's gpuLayers, or no GPU device)" };
  const warning = weights ? hostWarning(weights) : null;
  const where = weights ? `; weights: ${placementText(weights)}` : '';
  if (layers.offloaded < layers.total)
    return {
      ...base,
      warning,
      state: 'partial',
      reason: `${layers.total - layers.offloaded} of ${layers.total} layers stayed on the CPU${where}`,
    };
  // Every layer counted as offloaded, yet weights beyond the input embeddings stayed in host memory:
  // MoE experts kept on the CPU (--n-cpu-moe, -ot exps=CPU) or other tensor overrides.
  if (weights && weightsBeyondEmbeddingInHost(weights))
    return {
      ...base,
      warning,
      state: 'partial',
      reason: `all ${layers.total} layers were offloaded, but ${weights.host_mib.toFixed(0)} MiB of weights (${(hostShare(weights) * 100).toFixed(0)} %) stayed in host memory, more than the input embeddings llama.cpp keeps there (tensor overrides such as MoE experts on the CPU)${where}`,
    };
  return { ...base, state: 'full', reason: null };
}

/** One line on where a run's model ran, for the CLI summary, the Run view and the report; null for an endpoint. */
export function offloadLine(offload: GpuOffload | null | undefined): string | null {
  if (!offload) return null;
  const layers = offload.layers ? `${offload.layers.offloaded}/${offload.layers.total} layers` : null;
  const weights = offload.weights ? `weights ${placementText(offload.weights)}` : null;
  const facts = [layers, offload.state === 'partial' ? null : weights].filter(Boolean).join('; ');
  const head = `offload: ${offload.state}${offload.backend ? ` (${offload.backend})` : ''}`;
  const body = [facts, offload.reason].filter(Boolean).join('; ');
  return body ? `${head}: ${body}` : head;
}

/**
 * The offload warnings of an experiment's conditions, each said once with the conditions it
 * applies to: a condition whose weights sat mostly in host memory measured the CPU as much as the GPU.
 */
export function offloadWarnings(conditions: readonly { name: string; offload_warning?: string | null }[]): string[] {
  const byWarning = new Map<string, string[]>();
  for (const condition of conditions)
    if (condition.offload_warning)
      byWarning.set(condition.offload_warning, [...(byWarning.get(condition.offload_warning) ?? []), condition.name]);
  return [...byWarning].map(([warning, names]) => `${names.join(', ')}: ${warning}`);
}

/**
 * Where nothing was offloaded, the GPU read during the run held none of its work: its memory and
 * utilization are the machine's, shown as context (the run's GPU energy is context only too).
 */
export function gpuContextNote(offload: GpuOffload | null | undefined): string | null {
  if (offload?.state !== 'none') return null;
  const engine = offload.backend ? `a ${offload.backend} engine` : 'the engine';
  return `context only: ${engine} with nothing offloaded ran on the CPU, so these GPU figures are the machine's, not this run's`;
}
