import { tensorDataBytes, type GgufTensorHeader } from './gguf-reader';

/** A model's weight bytes by where llama.cpp keeps them and when a decode step reads them. */
export interface WeightPlaces {
  /** Each repeating block blk.N (N below the block count), in layer order. */
  layerBytes: number[];
  /** blk.* tensors outside the counted blocks (a layer past block_count, such as a next-token predictor). */
  extraBlockBytes: number;
  /** Of layerBytes, the routed experts' tensors (*_exps). */
  expertBytes: number;
  /** Everything else but token_embd: the output projection, the final norm. */
  headBytes: number;
  /** token_embd.weight. */
  embeddingBytes: number;
  /** No output.weight: the output projection is token_embd itself. */
  tiedOutput: boolean;
  parameterCount: number;
  /** Rows of the output projection (the vocabulary), or null without one. */
  outputRows: number | null;
  /** Tensors whose type has no known block size: their bytes are missing from the sums. */
  unknownTypeTensors: string[];
}

const LAYER_TENSOR = /^blk\.(\d+)\./;

export function weightPlaces(tensors: readonly GgufTensorHeader[], nLayer: number): WeightPlaces {
  const places: WeightPlaces = {
    layerBytes: new Array<number>(Math.max(0, nLayer)).fill(0),
    extraBlockBytes: 0,
    expertBytes: 0,
    headBytes: 0,
    embeddingBytes: 0,
    tiedOutput: !tensors.some((tensor) => tensor.name === 'output.weight'),
    parameterCount: 0,
    outputRows: null,
    unknownTypeTensors: [],
  };
  for (const tensor of tensors) {
    places.parameterCount += tensor.shape.reduce((product, dim) => product * dim, 1);
    if (tensor.name === 'output.weight' || (places.tiedOutput && tensor.name === 'token_embd.weight'))
      places.outputRows = tensor.shape[1] ?? null;
    const bytes = tensorDataBytes(tensor);
    if (bytes === null) {
      places.unknownTypeTensors.push(tensor.name);
      continue;
    }
    const layer = LAYER_TENSOR.exec(tensor.name);
    if (layer && Number(layer[1]) < nLayer) {
      places.layerBytes[Number(layer[1])]! += bytes;
      if (tensor.name.includes('_exps.')) places.expertBytes += bytes;
    } else if (tensor.name.startsWith('blk.')) places.extraBlockBytes += bytes;
    else if (tensor.name === 'token_embd.weight') places.embeddingBytes += bytes;
    else places.headBytes += bytes;
  }
  return places;
}
