/** Server lifecycle, profiles and effective configuration: the shapes the UI and CLI see. */
import type { GpuOffload } from './runs';
import type { ServerProfile } from './specs';

export type { FlashAttention, ServerProfile } from './specs';

/**
 * What a managed server is started for: generated answers (chat, completions), generated answers
 * that may call functions (`--jinja`, the chat template's own tool support), embeddings
 * (`--embeddings`) or reranking (`--reranking`), as the workload it serves asks.
 */
export type ServerPurpose = 'generation' | 'tool-calls' | 'embeddings' | 'rerank';

/** Whether a purpose is answered with generated text (and so judged, timed by token, compared in experiments). */
export const generatesText = (purpose: ServerPurpose): boolean => purpose === 'generation' || purpose === 'tool-calls';

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
  /** The input token-embedding table's shape (n_vocab × n_embd) from the log; absent in older records. */
  inputEmbedding?: { vocabulary: number; width: number } | null;
  /** The ggml backend libraries the server process loaded (e.g. libggml-cpu-zen4.so, libggml-cuda.so); absent where not readable. */
  backendLibraries?: string[];
  /** The LoRA adapters the server loaded, as it reports them (`GET /lora-adapters`): place, file and scale; absent without one. */
  loraAdapters?: { id: number; path: string; scale: number }[];
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

/** What a llama-server or llama.cpp log says about the build, the devices and where the model went (`server explain`). */
export interface LogExplanation {
  /** "5908 (538cc77f)", with the compiler and target where printed. */
  build: string | null;
  /** cuda, rocm, vulkan, metal, sycl or cpu: the backend whose devices held the weights. */
  backend: string | null;
  devices: { id: string; name: string; integrated: boolean | null; used: boolean | null }[];
  layers: { offloaded: number; total: number } | null;
  offload: GpuOffload | null;
  kvMib: Record<string, number>;
  kvTypes: { k: string; v: string } | null;
  context: { size: number | null; perSequence: number | null; trained: number | null };
  flashAttention: 'on' | 'off' | 'auto' | null;
  slots: number | null;
  /** The address the ready line names ("127.0.0.1:8080", as printed); null when the text has no ready line. */
  listeningOn: string | null;
  /** A failure the log ends in, with its fix. */
  fault: { code: ServerFaultCode; hint: string } | null;
  /** What costs performance, each with the fix. */
  warnings: string[];
  /** What the text does not say, each with what stays unknown ("no build line in this text: the engine build is unknown"). */
  missing: string[];
  /** How many lines llama.cpp printed; none means the text is not a llama.cpp log. */
  llamaLines: number;
  lines: number;
}

/** What start-up cleaned after processes that died: their orphaned servers stopped, their runs marked interrupted. */
export interface StartupRecovery {
  orphans: OrphanSweep;
  interruptedRuns: number;
}

export interface OrphanSweep {
  killed: { sessionId: string; pid: number; port: number | null }[];
  closed: number;
}
