import type { EngineInfo } from '../../../shared/contract/engine';
import type { EngineCapabilities } from '../../../shared/contract/server';
import type { ServerAddress } from '../../core/server-address';
import { fetchJson, type ManagedEngineAdapter } from '../engine-adapter';
import { buildLlamaServerArgs } from '../llamacpp/launch-args';
import type { GpuIdentities } from '../gpu-identity';
import { gpuSelectionEnv } from '../gpu-selection';
import { loadedBackendLibraries } from '../llamacpp/engine-smoke';
import { classifyFault, LISTENING, LOAD_PROGRESS, parseLogFacts } from '../llamacpp/log-facts';

export const LLAMACPP_CAPABILITIES: EngineCapabilities = {
  managedProcess: true,
  coldProcess: true,
  promptCacheControl: true,
  slotErase: true,
  serverMetrics: true,
  serverTimings: true,
  tokenize: true,
  gpuLayers: true,
  kvCacheTypes: true,
};

/** `identities`: the machine's GPU listings, read when a Vulkan engine's GPU choice must be matched to its devices. */
const LORA_FLAGS = new Set(['--lora', '--lora-scaled']);

/** The adapters a server loaded, as it reports them: what each request's `lora` ids refer to. Empty where it would not say. */
async function readLoraAdapters(server: ServerAddress): Promise<{ id: number; path: string; scale: number }[]> {
  const listed: unknown = await fetchJson(`${server.baseUrl}/lora-adapters`, { headers: { ...server.headers } });
  if (!Array.isArray(listed)) return [];
  return listed.flatMap((entry: unknown) => {
    const { id, path, scale } = (entry ?? {}) as { id?: unknown; path?: unknown; scale?: unknown };
    return typeof id === 'number' && typeof path === 'string' && typeof scale === 'number' ? [{ id, path, scale }] : [];
  });
}

export function llamaCppAdapter(engine: EngineInfo, identities: GpuIdentities | null = null): ManagedEngineAdapter {
  return {
    id: 'llama.cpp',
    capabilities: LLAMACPP_CAPABILITIES,
    launch: ({ modelPath, port, profile, draftModelPath, loraAdapters, projectorPath }) => ({
      program: engine.serverPath,
      args: buildLlamaServerArgs(modelPath, port, profile, draftModelPath ?? null, loraAdapters ?? [], projectorPath ?? null),
      env: gpuSelectionEnv(profile.gpuDevices, engine.backend, identities),
    }),
    apiKeyEnv: 'LLAMA_API_KEY',
    healthPath: '/health',
    metricsPath: '/metrics',
    cacheReset: null,
    isLoadProgress: (line) => LOAD_PROGRESS.test(line),
    isListening: (line) => LISTENING.test(line),
    classifyFault,
    readEffectiveConfig: async (server, logLines, argv, pid) => {
      const facts = parseLogFacts(logLines);
      const props = await fetchJson(`${server.baseUrl}/props`, { headers: { ...server.headers } });
      const settings = (props?.default_generation_settings ?? {}) as { n_ctx?: number };
      return {
        version: engine.version,
        build: typeof props?.build_info === 'string' ? props.build_info : null,
        model: typeof props?.model_path === 'string' ? props.model_path : null,
        modelFileType: typeof props?.model_ftype === 'string' ? props.model_ftype : null,
        contextSize: facts.contextSize,
        contextPerSlot: typeof settings.n_ctx === 'number' ? settings.n_ctx : null,
        slots: typeof props?.total_slots === 'number' ? props.total_slots : null,
        trainedContext: facts.trainedContext,
        layersOffloaded: facts.layersOffloaded,
        buffersMib: facts.buffersMib,
        inputEmbedding: facts.inputEmbedding,
        ...(pid !== undefined && process.platform === 'linux' ? { backendLibraries: loadedBackendLibraries(pid) } : {}),
        ...(argv.some((arg) => LORA_FLAGS.has(arg)) ? { loraAdapters: await readLoraAdapters(server) } : {}),
        argv,
      };
    },
  };
}
