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
  source: 'demo' | 'folder' | 'file';
  /** Only when asked for (hashing reads the whole file); cached by path, size and mtime. */
  sha256?: string;
}

export interface ModelScan {
  models: ModelEntry[];
  /** Folders that could not be read, with the reason. */
  problems: string[];
}
