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
}
