import type { EngineInfo } from '../../shared/contract/engine';
import type { GpuOffload } from '../../shared/contract/runs';
import type { EffectiveConfig } from '../../shared/contract/server';
import { offloadByPlacement } from '../../shared/gpu-offload';
import { weightPlacement } from '../../shared/weight-placement';

const GPU_LIBRARY = /^libggml-(cuda|vulkan|metal|hip|sycl)\.so$/;

export function describeGpuOffload(engine: EngineInfo, config: EffectiveConfig | null): GpuOffload {
  const layers = config?.layersOffloaded ?? null;
  const weights = config ? weightPlacement(config.buffersMib, config.inputEmbedding ?? null) : null;
  const base = { backend: engine.backend, layers, weights, warning: null };
  if (engine.backend === 'cpu') {
    const reason = engine.build?.fallbackReason
      ? `the engine is a CPU build: the prebuilt GPU engine failed (${engine.build.fallbackReason.split('\n')[0]})`
      : 'the engine is a CPU build (backend cpu)';
    return { ...base, state: 'none', reason };
  }
  const libraries = config?.backendLibraries;
  if (engine.backend && libraries && libraries.length > 0 && !libraries.some((name) => GPU_LIBRARY.test(name)))
    return { ...base, state: 'none', reason: `the ${engine.backend} backend library did not load (loaded: ${libraries.join(', ')})` };
  return offloadByPlacement(engine.backend, layers, weights);
}
