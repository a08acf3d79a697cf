import { metaNumber, readGgufHeaderAsync, type GgufHeader } from './gguf-reader';
import { weightPlaces } from './weight-places';

/**
 * What one decode step reads from memory, from a GGUF file's tensor table and metadata:
 * every weight a token passes through, and the shape of the KV cache.
 */
export interface DecodeFootprint {
  architecture: string;
  /** Weights of the repeating blocks (blk.N.*), read in full every step. */
  blockWeightBytes: number;
  /** The output projection (output.weight, or token_embd.weight where the output is tied to it) and final norm. */
  headWeightBytes: number;
  /** token_embd.weight when it is only looked up (one row per token), which a step does not stream. */
  embeddingLookupBytes: number;
  nLayer: number;
  nHeadKv: number;
  headDimK: number;
  headDimV: number;
  /** Tensors whose type has no known block size: their bytes are missing from the sums. */
  unknownTypeTensors: string[];
}

export function decodeFootprint(header: GgufHeader): DecodeFootprint | { reason: string } {
  const architecture = header.metadata.get('general.architecture');
  if (typeof architecture !== 'string') return { reason: 'the GGUF file names no general.architecture' };
  const meta = (key: string) => metaNumber(header.metadata.get(`${architecture}.${key}`));
  const nLayer = meta('block_count');
  const embedding = meta('embedding_length');
  const nHead = meta('attention.head_count');
  const nHeadKv = meta('attention.head_count_kv') ?? nHead;
  if (nLayer === null || embedding === null || nHead === null || nHeadKv === null)
    return { reason: `the GGUF metadata lacks ${architecture}.block_count, embedding_length or attention.head_count` };
  const headDim = embedding / nHead;
  const places = weightPlaces(header.tensors, nLayer);
  return {
    architecture,
    blockWeightBytes: places.layerBytes.reduce((sum, bytes) => sum + bytes, 0) + places.extraBlockBytes,
    headWeightBytes: places.headBytes + (places.tiedOutput ? places.embeddingBytes : 0),
    embeddingLookupBytes: places.tiedOutput ? 0 : places.embeddingBytes,
    nLayer,
    nHeadKv,
    headDimK: meta('attention.key_length') ?? headDim,
    headDimV: meta('attention.value_length') ?? headDim,
    unknownTypeTensors: places.unknownTypeTensors,
  };
}

export async function readDecodeFootprint(file: string): Promise<DecodeFootprint | { reason: string }> {
  try {
    return decodeFootprint(await readGgufHeaderAsync(file));
  } catch (error) {
    return { reason: `the model file could not be read: ${(error as Error).message}` };
  }
}
