import { GGUFValueType } from '@huggingface/gguf';
import { gaussian, seededRandom, toHalf } from '../core/random';
import { GgmlType, writeGgufFile, type GgufEntry, type GgufTensor } from './gguf-writer';
import type { SyntheticModelShape } from './synthetic-model';

/**
 * The demo image projector: a small SigLIP-style vision encoder with a Gemma 3 projection (the
 * layout llama.cpp's multimodal library reads for `--mmproj`), seeded, with random weights. An
 * image of any size is scaled to `imageSize` square, cut into patches, encoded and pooled to
 * `(imageSize / patchSize / merge)²` image tokens in the text model's embedding width: it costs
 * what an encoder of its size costs and tells the demo model nothing about the picture.
 */
export const DEMO_PROJECTOR_SHAPE = {
  imageSize: 224,
  patchSize: 14,
  /** Patches pooled per side into one image token: 16 × 16 patches become 4 × 4 = 16 tokens. */
  merge: 4,
  embeddingLength: 128,
  feedForwardLength: 256,
  blockCount: 2,
  headCount: 4,
  weightStd: 0.02,
  seed: 20261207,
} as const;

/** Image tokens the demo projector gives every image. */
export const DEMO_PROJECTOR_IMAGE_TOKENS =
  (DEMO_PROJECTOR_SHAPE.imageSize / DEMO_PROJECTOR_SHAPE.patchSize / DEMO_PROJECTOR_SHAPE.merge) ** 2;

export function writeSyntheticProjector(file: string, model: SyntheticModelShape): void {
  const {
    imageSize,
    patchSize,
    merge,
    embeddingLength: width,
    feedForwardLength,
    blockCount,
    headCount,
    weightStd,
    seed,
  } = DEMO_PROJECTOR_SHAPE;
  const normal = gaussian(seededRandom(seed));
  const patches = (imageSize / patchSize) ** 2;
  const count = (shape: readonly number[]) => shape.reduce((product, size) => product * size, 1);
  // Matrices in F16, as converted projectors ship them; what is added to activations (the position
  // embedding, biases, norms) in F32, which the CPU backend's add requires.
  const random = (name: string, shape: number[], type: GgmlType = GgmlType.F16): GgufTensor => ({
    name,
    shape,
    type,
    data: () => {
      const values = type === GgmlType.F16 ? new Uint16Array(count(shape)) : new Float32Array(count(shape));
      for (let index = 0; index < values.length; index++)
        values[index] = type === GgmlType.F16 ? toHalf(normal() * weightStd) : normal() * weightStd;
      return new Uint8Array(values.buffer);
    },
  });
  const constant = (name: string, shape: number[], value: number): GgufTensor => ({
    name,
    shape,
    type: GgmlType.F32,
    data: () => new Uint8Array(new Float32Array(count(shape)).fill(value).buffer),
  });
  const tensors: GgufTensor[] = [
    random('v.patch_embd.weight', [patchSize, patchSize, 3, width]),
    constant('v.patch_embd.bias', [width], 0),
    random('v.position_embd.weight', [width, patches], GgmlType.F32),
  ];
  for (let layer = 0; layer < blockCount; layer++) {
    const block = `v.blk.${layer}`;
    for (const projection of ['attn_q', 'attn_k', 'attn_v', 'attn_out'])
      tensors.push(random(`${block}.${projection}.weight`, [width, width]), constant(`${block}.${projection}.bias`, [width], 0));
    for (const norm of ['ln1', 'ln2'])
      tensors.push(constant(`${block}.${norm}.weight`, [width], 1), constant(`${block}.${norm}.bias`, [width], 0));
    tensors.push(
      random(`${block}.ffn_up.weight`, [width, feedForwardLength]),
      constant(`${block}.ffn_up.bias`, [feedForwardLength], 0),
      random(`${block}.ffn_down.weight`, [feedForwardLength, width]),
      constant(`${block}.ffn_down.bias`, [width], 0),
    );
  }
  tensors.push(
    constant('v.post_ln.weight', [width], 1),
    constant('v.post_ln.bias', [width], 0),
    constant('mm.soft_emb_norm.weight', [width], 1),
    random('mm.input_projection.weight', [model.embeddingLength, width]),
  );
  const u32 = (key: string, value: number): GgufEntry => ({ key, type: GGUFValueType.UINT32, value });
  const floats = (key: string, value: number[]): GgufEntry => ({ key, type: GGUFValueType.ARRAY, itemType: GGUFValueType.FLOAT32, value });
  const entries: GgufEntry[] = [
    { key: 'general.architecture', type: GGUFValueType.STRING, value: 'clip' },
    { key: 'general.name', type: GGUFValueType.STRING, value: 'Infer Lab demo image projector' },
    { key: 'clip.has_vision_encoder', type: GGUFValueType.BOOL, value: true },
    { key: 'clip.projector_type', type: GGUFValueType.STRING, value: 'gemma3' },
    { key: 'clip.use_gelu', type: GGUFValueType.BOOL, value: true },
    u32('clip.vision.image_size', imageSize),
    u32('clip.vision.patch_size', patchSize),
    u32('clip.vision.embedding_length', width),
    u32('clip.vision.feed_forward_length', feedForwardLength),
    u32('clip.vision.block_count', blockCount),
    u32('clip.vision.projection_dim', model.embeddingLength),
    u32('clip.vision.attention.head_count', headCount),
    { key: 'clip.vision.attention.layer_norm_epsilon', type: GGUFValueType.FLOAT32, value: 1e-6 },
    u32('clip.vision.projector.scale_factor', merge),
    floats('clip.vision.image_mean', [0.5, 0.5, 0.5]),
    floats('clip.vision.image_std', [0.5, 0.5, 0.5]),
  ];
  writeGgufFile(file, entries, tensors);
}
