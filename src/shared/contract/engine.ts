export type EngineBackend = 'cpu' | 'cuda' | 'vulkan' | 'metal';
export const ENGINE_BACKENDS: readonly EngineBackend[] = ['cpu', 'cuda', 'vulkan', 'metal'];

/** Where the llama-server binary came from, in the order they are tried. */
export type EngineOrigin = 'configured' | 'path' | 'managed';

export interface EngineInfo {
  origin: EngineOrigin;
  serverPath: string;
  /** Folder holding llama-quantize, llama-bench, llama-perplexity when they sit beside the server. */
  toolsDir: string;
  /** `llama-server --version` output, e.g. "version: 1 (80fb11a)". */
  version: string | null;
  commit: string | null;
  backend: EngineBackend | null;
  /** How the managed engine was built and what its smoke test saw; null for a configured or PATH engine. */
  build: EngineBuildFacts | null;
}

export interface EngineBuildFacts {
  /** Compiled on prebuilt llama.cpp libraries (npm packages), or all of llama.cpp from source. */
  route: 'prebuilt' | 'source';
  packages: { name: string; version: string }[];
  /** The CPU backend variant the smoke test saw loaded (e.g. "zen4"); null when built in. */
  cpuVariant: string | null;
  /** The GPU backend library the smoke test saw loaded; null for a CPU engine. */
  gpuLibrary: string | null;
  /** Why a prebuilt plan ended in a source build. */
  fallbackReason: string | null;
}
