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
  /** The pooling an embedding model declares (`<arch>.pooling_type`: 1 mean, 2 CLS, 3 last, 4 rank); absent or null where it declares none. */
  poolingType?: number | null;
  /** Whether it can rerank: it declares rank pooling (4) or carries a classifier output (`cls.*`, `cls_out.*` tensors). */
  rankingHead?: boolean;
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

/** What a memory plan assumes of the server (llama-server's --ctx-size is contextPerSlot × parallel). */
export interface ModelPlanSettings {
  contextPerSlot: number;
  parallel: number;
  kvType: 'f16' | 'q8_0' | 'q4_0';
  flashAttention: boolean;
  ubatch: number;
}

export interface ModelPlanRequest {
  /** hf:OWNER/REPO[@REVISION], or a GGUF file or a folder of them. */
  source: string;
  /** Quantization labels to plan (Q4_K_M, Q8_0…); every GGUF in the source when absent or empty. */
  quants?: string[];
  contextPerSlot?: number;
  parallel?: number;
  kvType?: 'f16' | 'q8_0' | 'q4_0';
  flashAttention?: boolean;
  /** A base model (demo:q8_0 or a GGUF path) each LoRA adapter of the source is checked against. */
  adapterFor?: string;
}

/** A memory pool the plan fits models into: each GPU's free memory, or the host's RAM. */
export interface PlannedDevice {
  kind: 'gpu' | 'host';
  name: string;
  totalBytes: number;
  freeBytes: number;
  bandwidthGbPerS: number | null;
  /** Where the bandwidth comes from (datasheet, read probe), or why it is missing. */
  bandwidthSource: string;
}

export type PlanVerdict = 'fits' | 'partial' | 'cpu' | 'no';

export interface PlannedCandidate {
  label: string;
  /** Hub paths or local files, every part of a split model. */
  files: string[];
  sizeBytes: number;
  architecture: string | null;
  parameterCount: number | null;
  contextTrain: number | null;
  memory: {
    /** Blocks and output head, which a full offload puts on the GPUs. */
    offloadableBytes: number;
    /** The embedding table, kept in host memory. */
    hostWeightBytes: number;
    kvBytes: number;
    /** Each device's compute buffer (an estimate from the model's widths; docs/METRICS.md says how). */
    computeBytes: number;
    /** Per GPU, the runtime's own memory (CUDA/ROCm context): an allowance. */
    allowanceBytes: number;
    /** Where the figures are a bound, and why. */
    notes: string[];
  } | null;
  fit: {
    verdict: PlanVerdict;
    layersOnGpu: number;
    layersTotal: number;
    gpuBytes: number;
    hostBytes: number;
    largestFullContext: number | null;
    detail: string;
  } | null;
  /** Decode tokens/s one sequence cannot exceed at an empty context: bandwidth ÷ weights read per token. */
  ceiling: { tokensPerS: number; bytesPerToken: number } | null;
  ceilingReason: string | null;
  /**
   * A local file's newest completed run: one sequence's decode speed (1000 / mean TPOT, lower
   * than at one sequence when several decoded at once) and its share of the ceiling.
   */
  measured: { runId: string; startedAt: string; tokensPerS: number; decodeSequences: number | null; ofCeiling: number | null } | null;
  /** Why this candidate could not be planned (unreadable header, missing part). */
  problem: string | null;
  /**
   * A LoRA adapter, not a model (general.type "adapter"): what its header says, and, where the plan
   * named a base model (`adapterFor`), whether it fits that model; nothing else is planned for it.
   */
  adapter?: {
    architecture: string | null;
    rank: number;
    alpha: number | null;
    targets: string[];
    base: { model: string; fits: boolean; problem: string | null } | null;
  } | null;
  /**
   * Set when the file is a multimodal projector (an mmproj file): what it encodes and its
   * projector type; it is served beside a model as the profile's projector, not planned as one.
   */
  projector?: { vision: boolean; audio: boolean; projectorType: string | null } | null;
}

export interface ModelPlan {
  source: string;
  /** The hub revision planned (a branch, tag or commit); null for local files. */
  revision: string | null;
  settings: ModelPlanSettings;
  devices: PlannedDevice[];
  /** Which tool listed the GPUs, or why none was listed. */
  gpuSource: string;
  /** Sorted: what fits fully, then partly, then on the CPU, then not at all; each by size, largest first. */
  candidates: PlannedCandidate[];
  /** Requested quantizations the source lacks, incomplete split sets. */
  problems: string[];
}

/** A hub repository whose name matched a search and that holds GGUF files. */
export interface HubModelMatch {
  /** hf:OWNER/REPO, ready to plan or pull. */
  source: string;
  downloads: number;
  likes: number;
  /** Its files need an accepted licence and HF_TOKEN. */
  gated: boolean;
  /** When the repository last changed, ISO 8601; null when the hub did not say. */
  updatedAt: string | null;
}

export interface ModelPullRequest {
  /** hf:OWNER/REPO[@REVISION]. */
  source: string;
  /** Quantization labels to pull; ['all'] for every one; empty when the repository has only one. */
  quants: string[];
}

/** A pulled quantization: its files in the cache's snapshot (every part of a split model, in order). */
export interface PulledModel {
  label: string;
  files: string[];
  sizeBytes: number;
  /** Every file was in the cache already; nothing was downloaded for it. */
  alreadyCached: boolean;
}

export interface ModelPull {
  source: string;
  revision: string;
  /** The commit the revision pointed at: the snapshot folder the files are in. */
  commit: string;
  /** The Hugging Face cache the files went to (HF_HUB_CACHE, else HF_HOME/hub). */
  cacheDir: string;
  models: PulledModel[];
  /** Bytes that crossed the network in this pull (not what the cache or an interrupted pull already held). */
  downloadedBytes: number;
  problems: string[];
}

/** Where a pull stands: the file arriving now, and the whole pull. */
export interface PullProgress {
  file: string;
  fileBytesDone: number;
  fileBytesTotal: number;
  bytesDone: number;
  bytesTotal: number;
  /** Bytes received in this pull so far, for its rate. */
  downloadedBytes: number;
  elapsedMs: number;
}
