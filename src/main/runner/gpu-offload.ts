import type { EngineInfo } from '../../shared/contract/engine';
import type { EffectiveConfig } from '../../shared/contract/server';

/** Whether a run's model ran on a GPU, as every run's manifest states it. */
export interface GpuOffload {
  state: 'full' | 'partial' | 'none' | 'unknown';
  backend: EngineInfo['backend'];
  layers: { offloaded: number; total: number } | null;
  /** Why nothing (or not everything) was offloaded; null when everything was. */
  reason: string | null;
}

const GPU_LIBRARY = /^libggml-(cuda|vulkan|metal|hip|sycl)\.so$/;

export function describeGpuOffload(engine: EngineInfo, config: EffectiveConfig | null): GpuOffload {
  const layers = config?.layersOffloaded ?? null;
  const base = { backend: engine.backend, layers };
  if (engine.backend === 'cpu') {
    const reason = engine.build?.fallbackReason
      ? `the engine is a CPU build: the prebuilt GPU engine failed (${engine.build.fallbackReason.split('\n')[0]})`
      : 'the engine is a CPU build (backend cpu)';
    return { ...base, state: 'none', reason };
  }
  const libraries = config?.backendLibraries;
  if (engine.backend && libraries && libraries.length > 0 && !libraries.some((name) => GPU_LIBRARY.test(name)))
    return { ...base, state: 'none', reason: `the ${engine.backend} backend library did not load (loaded: ${libraries.join(', ')})` };
  if (!layers) return { ...base, state: 'unknown', reason: 'the server log did not say how many layers were offloaded' };
  if (layers.offloaded === 0)
    return { ...base, state: 'none', reason: "no layers were offloaded (the profile's gpuLayers, or no GPU device)" };
  if (layers.offloaded < layers.total)
    return { ...base, state: 'partial', reason: `${layers.total - layers.offloaded} of ${layers.total} layers stayed on the CPU` };
  return { ...base, state: 'full', reason: null };
}
