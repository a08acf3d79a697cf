import { metaNumber, type GgufHeader } from '../gguf-reader';
import { weightPlaces } from '../weight-places';

/**
 * What a memory plan needs from a model's GGUF headers (every part of a split model): the
 * attention shape that sizes the KV cache, the widths that size the compute buffer, and the
 * weights by where llama.cpp puts them.
 */
export interface ModelShape {
  architecture: string;
  nLayer: number;
  nEmbd: number;
  nHead: number;
  /** Per layer the largest, where the model gives a list: an upper bound for the cache. */
  nHeadKv: number;
  headDimK: number;
  headDimV: number;
  nVocab: number;
  nFf: number;
  /** MoE: experts per layer and those each token uses; null for dense models. */
  experts: { count: number; used: number; feedForward: number } | null;
  contextTrain: number | null;
  /** Attention over a window (Gemma, gpt-oss…): those layers cache less than the full context. */
  slidingWindow: number | null;
  /** DeepSeek's multi-head latent attention: one compressed row per token and layer. */
  mlaKeyLength: number | null;
  /** State-space or recurrent layers (Mamba, RWKV and hybrids): their state is not a KV cache. */
  recurrent: boolean;
  /** Weight bytes of each repeating block blk.N, in layer order. */
  layerBytes: number[];
  /** Of layerBytes, the routed experts' tensors (*_exps), of which a token reads `used` of `count`. */
  expertBytes: number;
  /** The output projection and final norm, read every step (a copy of token_embd when the output is tied to it). */
  headBytes: number;
  /** token_embd, which llama.cpp looks rows up in and keeps in host memory. */
  embeddingBytes: number;
  /** The output projection is token_embd itself. */
  tiedOutput: boolean;
  parameterCount: number;
  fileType: number | null;
  /** Tensors whose type has no known block size: their bytes are missing from the sums. */
  unknownTypeTensors: string[];
}

/** Reads the shape from a model's headers: the first part's metadata and every part's tensors. */
export function modelShape(headers: readonly GgufHeader[]): ModelShape | { reason: string } {
  const first = headers[0];
  if (!first) return { reason: 'no GGUF header was read' };
  const architecture = first.metadata.get('general.architecture');
  if (typeof architecture !== 'string') return { reason: 'the GGUF file names no general.architecture' };
  const meta = (key: string) => metaNumber(first.metadata.get(`${architecture}.${key}`));
  const nLayer = meta('block_count');
  const nEmbd = meta('embedding_length');
  const nHead = meta('attention.head_count');
  if (nLayer === null || nEmbd === null || nHead === null || nLayer <= 0 || nHead <= 0)
    return { reason: `the GGUF metadata lacks ${architecture}.block_count, embedding_length or attention.head_count` };
  const places = weightPlaces(
    headers.flatMap((header) => header.tensors),
    nLayer,
  );
  const tokens = first.metadata.get('tokenizer.ggml.tokens');
  const nVocab = meta('vocab_size') ?? (tokens && typeof tokens === 'object' ? tokens.length : null) ?? places.outputRows;
  if (nVocab === null) return { reason: 'the GGUF file gives no vocabulary size (no tokenizer.ggml.tokens, vocab_size or output tensor)' };
  const expertCount = meta('expert_count');
  const expertUsed = meta('expert_used_count');
  const headDim = nEmbd / nHead;
  const fileType = metaNumber(first.metadata.get('general.file_type'));
  return {
    architecture,
    nLayer,
    nEmbd,
    nHead,
    nHeadKv: meta('attention.head_count_kv') ?? nHead,
    headDimK: meta('attention.key_length') ?? headDim,
    headDimV: meta('attention.value_length') ?? headDim,
    nVocab,
    nFf: meta('feed_forward_length') ?? 4 * nEmbd,
    experts:
      expertCount !== null && expertCount > 1 && expertUsed !== null && expertUsed > 0
        ? { count: expertCount, used: expertUsed, feedForward: meta('expert_feed_forward_length') ?? meta('feed_forward_length') ?? 0 }
        : null,
    contextTrain: meta('context_length'),
    slidingWindow: meta('attention.sliding_window'),
    mlaKeyLength: meta('attention.key_length_mla'),
    recurrent: [...first.metadata.keys()].some((key) => key.startsWith(`${architecture}.ssm.`) || key.startsWith(`${architecture}.wkv.`)),
    layerBytes: places.layerBytes,
    expertBytes: places.expertBytes,
    // A tied output reads the embedding as its projection: llama.cpp loads a second copy where the output runs.
    headBytes: places.headBytes + places.extraBlockBytes + (places.tiedOutput ? places.embeddingBytes : 0),
    embeddingBytes: places.embeddingBytes,
    tiedOutput: places.tiedOutput,
    parameterCount: places.parameterCount,
    fileType,
    unknownTypeTensors: places.unknownTypeTensors,
  };
}

export function layerWeightBytes(shape: ModelShape): number {
  return shape.layerBytes.reduce((sum, bytes) => sum + bytes, 0);
}

/** The weights as stored in the file, each tensor once. */
export function fileWeightBytes(shape: ModelShape): number {
  return layerWeightBytes(shape) + shape.headBytes + (shape.tiedOutput ? 0 : shape.embeddingBytes);
}
