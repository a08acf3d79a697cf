import { kvBytesPerElement } from '../kv-cache-types';
import { layerWeightBytes, type ModelShape } from './model-shape';

/** The server a plan is for: llama-server's --ctx-size is contextPerSlot × parallel, shared by its slots. */
export interface PlanSettings {
  contextPerSlot: number;
  parallel: number;
  /** -ctk and -ctv both. */
  kvType: string;
  flashAttention: boolean;
  /** llama-server's --ubatch-size (512 unless set): the tokens one compute step holds. */
  ubatch: number;
  /**
   * Rows of logits one step reserves. The engine's llama-server reserves one per slot (its
   * `n_outputs_max`, the default here); builds without that setting reserved the whole ubatch.
   */
  outputRows?: number;
}

export interface MemoryEstimate {
  /** KV cells: the whole server context, padded as llama.cpp pads it. */
  kvCells: number;
  /** Per layer at kvCells. */
  kvBytesPerLayer: number;
  kvBytes: number;
  /** The compute buffer each device holds (see computeBufferBytes). */
  computeBytes: number;
  /** The repeating blocks and the output head: what a full offload puts on the GPUs. */
  offloadableBytes: number;
  /** The embedding table, looked up in host memory wherever the layers run. */
  hostWeightBytes: number;
  /** Where the estimate is only a bound, and why. */
  notes: string[];
}

/** llama.cpp rounds the KV cache up to a multiple of this many cells. */
export const KV_CELL_PADDING = 256;

export function kvCellsFor(settings: Pick<PlanSettings, 'contextPerSlot' | 'parallel'>): number {
  return Math.ceil((settings.contextPerSlot * settings.parallel) / KV_CELL_PADDING) * KV_CELL_PADDING;
}

/** Bytes one cached token takes in one layer. */
export function kvBytesPerCellPerLayer(shape: ModelShape, kvType: string): number {
  const bytes = kvBytesPerElement(kvType);
  if (bytes === null) throw new Error(`unknown KV cache type "${kvType}"`);
  // MLA caches one latent row per token, which the values are read from too.
  if (shape.mlaKeyLength !== null) return shape.mlaKeyLength * bytes;
  return shape.nHeadKv * (shape.headDimK + shape.headDimV) * bytes;
}

/**
 * The cells one slot's attention spans: llama-server gives each slot a cache stream of its own,
 * so the mask and the scores of a step cover one slot's context, not the whole cache.
 */
export function attentionCellsFor(settings: Pick<PlanSettings, 'contextPerSlot' | 'parallel'>): number {
  return settings.parallel > 1 ? kvCellsFor({ contextPerSlot: settings.contextPerSlot, parallel: 1 }) : kvCellsFor(settings);
}

/**
 * The compute buffer: ggml's allocator reuses memory between the graph's steps, so the buffer
 * is set by the widest step for one ubatch of f32 activations, plus the attention mask that
 * every step keeps (f32, cast to f16 for flash attention: 4 or 2 bytes per cell and token):
 * - the output: the reserved rows of logits (n_vocab each) beside the ubatch's hidden state;
 * - attention without flash attention: the n_head × cells score matrix, beside the q/k/v/out rows;
 * - the feed-forward: gate, up and their product (for MoE, those of the experts in use, and
 *   the router's scores) beside the hidden state and its norm.
 * Flash attention never forms the score matrix. Checked against captured llama.cpp logs in
 * test/unit/model-plan.test.ts and against this engine's own server in
 * test/integration/plan-compute-buffer.test.ts (docs/METRICS.md, "Model plan", gives the errors).
 */
export function computeBufferBytes(shape: ModelShape, settings: PlanSettings): number {
  const { nEmbd } = shape;
  const cells = attentionCellsFor(settings);
  const outputRows = Math.min(settings.outputRows ?? settings.parallel, settings.ubatch);
  const output = outputRows * shape.nVocab + settings.ubatch * nEmbd;
  const attention = settings.ubatch * ((settings.flashAttention ? 0 : shape.nHead * cells) + 6 * nEmbd);
  const feedForward =
    settings.ubatch *
    (shape.experts ? 3 * shape.experts.used * shape.experts.feedForward + shape.experts.count + 4 * nEmbd : 3 * shape.nFf + 4 * nEmbd);
  const maskBytes = settings.flashAttention ? 2 : 4;
  return 4 * Math.max(output, attention, feedForward) + maskBytes * settings.ubatch * cells;
}

export function estimateMemory(shape: ModelShape, settings: PlanSettings): MemoryEstimate {
  const kvCells = kvCellsFor(settings);
  const kvBytesPerLayer = kvCells * kvBytesPerCellPerLayer(shape, settings.kvType);
  const notes: string[] = [];
  if (shape.slidingWindow !== null)
    notes.push(
      `every layer is counted at the full context; the sliding-window layers keep about ${shape.slidingWindow} cells each, so the KV cache is smaller than this`,
    );
  if (shape.recurrent) notes.push('the recurrent (state-space) layers keep a fixed state that is not counted here');
  if (shape.mlaKeyLength !== null) notes.push('multi-head latent attention: one compressed row per token and layer is cached');
  if (shape.unknownTypeTensors.length > 0)
    notes.push(`weights of unknown type left out: ${shape.unknownTypeTensors.slice(0, 3).join(', ')}`);
  return {
    kvCells,
    kvBytesPerLayer,
    kvBytes: kvBytesPerLayer * shape.nLayer,
    computeBytes: computeBufferBytes(shape, settings),
    offloadableBytes: layerWeightBytes(shape) + shape.headBytes,
    hostWeightBytes: shape.embeddingBytes,
    notes,
  };
}
