/** Server lifecycle, profiles and effective configuration: the shapes the UI and CLI see. */
import type { ServerProfile } from './specs';

export type { FlashAttention, ServerProfile } from './specs';

export type ServerState = 'stopped' | 'starting' | 'ready' | 'stopping' | 'crashed' | 'failed';

export type EngineId = 'llama.cpp' | 'vllm' | 'sglang' | 'ollama' | 'openai-endpoint';

/** What an engine can do; the UI disables what an engine cannot do instead of pretending. */
export interface EngineCapabilities {
  managedProcess: boolean;
  coldProcess: boolean;
  promptCacheControl: boolean;
  slotErase: boolean;
  serverMetrics: boolean;
  serverTimings: boolean;
  tokenize: boolean;
  gpuLayers: boolean;
  kvCacheTypes: boolean;
}

export type ServerFaultCode =
  | 'binary_missing'
  | 'out_of_memory'
  | 'bind_failed'
  | 'bad_model_file'
  | 'unsupported_flag'
  | 'model_not_found'
  | 'exited_early'
  | 'stalled'
  | 'timeout'
  | 'crashed'
  | 'oversubscribed'
  | 'unknown';

export interface ServerFault {
  code: ServerFaultCode;
  message: string;
  /** One line: what the user can do about it. */
  hint: string;
  exitCode: number | null;
  signal: string | null;
  logTail: string[];
}

export interface ColdStart {
  spawnToListeningMs: number | null;
  spawnToReadyMs: number;
  readyToFirstTokenMs: number | null;
  spawnToFirstTokenMs: number | null;
}

/** What actually ran, read back from the server after it was ready. */
export interface EffectiveConfig {
  version: string | null;
  build: string | null;
  model: string | null;
  modelFileType: string | null;
  contextSize: number | null;
  contextPerSlot: number | null;
  slots: number | null;
  trainedContext: number | null;
  layersOffloaded: { offloaded: number; total: number } | null;
  /** Buffer sizes in MiB by "device kind", e.g. {"CPU_Mapped model": 29.37, "CUDA0 KV": 8}. */
  buffersMib: Record<string, number>;
  /** The ggml backend libraries the server process loaded (e.g. libggml-cpu-zen4.so, libggml-cuda.so); absent where not readable. */
  backendLibraries?: string[];
  argv: string[];
}

export interface ServerSnapshot {
  id: string;
  engine: EngineId;
  state: ServerState;
  modelRef: string;
  modelPath: string;
  profileName: string;
  baseUrl: string | null;
  port: number | null;
  pid: number | null;
  startedAt: string | null;
  readyAt: string | null;
  coldStart: ColdStart | null;
  effectiveConfig: EffectiveConfig | null;
  fault: ServerFault | null;
  /** Used memory over all GPUs just before the process was spawned; null without a readable GPU. */
  gpuUsedBeforeSpawnMib?: number | null;
}

export interface ProfileProblem {
  field: keyof ServerProfile;
  message: string;
}
