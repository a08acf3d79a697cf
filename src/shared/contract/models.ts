/** One model in the library: a GGUF file (or a split set, listed once) and what its header says. */
export interface ModelEntry {
  path: string;
  name: string;
  /** All parts for a split model, the one file otherwise. */
  parts: string[];
  sizeBytes: number;
  valid: boolean;
  /** Why the file cannot be used, naming the problem. */
  invalidReason: string | null;
  architecture: string | null;
  parameterCount: number | null;
  quantization: string | null;
  contextLength: number | null;
  layers: number | null;
  tokenizer: string | null;
  synthetic: boolean;
  source: 'demo' | 'folder' | 'file' | 'ollama';
  /** Only when asked for (hashing reads the whole file); cached by path, size and mtime. */
  sha256?: string;
}

export interface ModelScan {
  models: ModelEntry[];
  /** Folders that could not be read, with the reason. */
  problems: string[];
}

/** A type the engine's llama-quantize can make. */
export interface QuantTypeInfo {
  type: string;
  /** llama-quantize's own note: size and perplexity change on its reference model, or bits per weight. */
  description: string;
  /** Made only with an importance matrix, which Infer Lab does not compute yet. */
  needsImportanceMatrix: boolean;
}
