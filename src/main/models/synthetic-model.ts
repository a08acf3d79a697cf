import fs from 'node:fs';
import path from 'node:path';
import { gguf, GGUFValueType } from '@huggingface/gguf';
import { projectRoot } from '../core/paths';
import { GgmlType, writeGgufFile, type GgufEntry, type GgufScalarType, type GgufTensor } from './gguf-writer';
import { gaussian, seededRandom, toHalf } from '../core/random';

/**
 * Shape of the synthetic demo model. Every matrix's inner dimension is a multiple of 256
 * so that K-quants (Q4_K_M and friends) apply to every layer, as they do for real models.
 */
export interface SyntheticModelShape {
  embeddingLength: number;
  blockCount: number;
  feedForwardLength: number;
  headCount: number;
  headCountKv: number;
  contextLength: number;
  seed: number;
}

export const DEMO_MODEL_SHAPE: SyntheticModelShape = {
  embeddingLength: 512,
  blockCount: 4,
  feedForwardLength: 1536,
  headCount: 8,
  headCountKv: 4,
  contextLength: 4096,
  seed: 20261130,
};

/** A ChatML template: explicit, so the server never falls back to a default that changes between builds. */
export const DEMO_CHAT_TEMPLATE =
  "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

export const SYNTHETIC_MARKER_KEY = 'inferlab.synthetic';

/** Copies the tokenizer (vocabulary, scores, types, special ids) from a llama.cpp vocab GGUF. */
export async function readTokenizerEntries(vocabFile: string): Promise<{ entries: GgufEntry[]; vocabSize: number }> {
  const parsed = await gguf(vocabFile, { allowLocalFile: true, typedMetadata: true });
  const entries: GgufEntry[] = [];
  let vocabSize = 0;
  for (const [key, typed] of Object.entries(parsed.typedMetadata)) {
    if (!key.startsWith('tokenizer.') || key === 'tokenizer.chat_template') continue;
    const { value, type, subType } = typed as { value: unknown; type: GGUFValueType; subType?: GGUFValueType };
    if (type === GGUFValueType.ARRAY) {
      if (subType === undefined || subType === GGUFValueType.ARRAY || !Array.isArray(value))
        throw new Error(`${vocabFile}: unsupported nested array in ${key}`);
      entries.push({ key, type, itemType: subType as GgufScalarType, value: value as GgufEntry['value'] as never });
      if (key === 'tokenizer.ggml.tokens') vocabSize = value.length;
    } else {
      entries.push({ key, type: type as GgufScalarType, value: value as string });
    }
  }
  if (vocabSize === 0) throw new Error(`${vocabFile}: no tokenizer.ggml.tokens array; not a llama.cpp vocab file`);
  return { entries, vocabSize };
}

/**
 * How the demo model's weights are shaped. Random weights alone give nearly flat logits,
 * so quantization noise flips greedy choices at random and quality measures mean nothing.
 * Here the residual stream stays dominated by the token embedding (every layer computes,
 * but its output projection is small), and each output-head row is the embedding of the
 * token that precedes it in a short English text. Logits then have a large margin relative
 * to the size of every weight, as a trained model's do, and greedy output walks the text.
 */
export interface DemoWeightDesign {
  /** Norm of every token-embedding row; layer outputs are measured against it. */
  embeddingNorm: number;
  /** Tokens outside the text share this fraction of their embedding direction with an anchor token from the text. */
  anchorShare: number;
  /** Norm of an output-head row's predecessor term: sets how sharp the distribution is. */
  headNorm: number;
  /** Weight, relative to the chosen predecessor, of the other tokens seen before it in the text (shared among them). */
  alternateWeight: number;
  /** Norm of head rows for tokens outside the text, relative to `headNorm`. */
  tailNorm: number;
  /** Multipliers on the attention and feed-forward output projections' usual 1/sqrt(n) scale. */
  attentionOutputScale: number;
  feedForwardOutputScale: number;
}

export const DEMO_WEIGHT_DESIGN: DemoWeightDesign = {
  embeddingNorm: 32,
  anchorShare: 0.8,
  headNorm: 0.6,
  alternateWeight: 0.6,
  tailNorm: 0.3,
  attentionOutputScale: 0.5,
  feedForwardOutputScale: 1,
};

/** The English text whose word order the demo model follows. */
export function demoModelTextFile(): string {
  return path.join(projectRoot(), 'resources', 'demo-model-text.txt');
}

/**
 * Paragraphs joined by single newlines, runs of whitespace inside them collapsed: the model
 * must not change with a checkout's line endings or an editor's wrapping.
 */
export function normalizeDemoText(raw: string): string {
  return raw
    .replace(/\r\n?/g, '\n')
    .split(/\n\s*\n/)
    .map((paragraph) => paragraph.replace(/\s+/g, ' ').trim())
    .filter((paragraph) => paragraph.length > 0)
    .join('\n');
}

export interface SpmVocabulary {
  tokens: readonly string[];
  scores: readonly number[];
}

/**
 * llama.cpp's SentencePiece (SPM) tokenization: a leading space, spaces as "▁", then
 * repeatedly merge the adjacent pair whose union is the best-scoring vocabulary entry
 * (leftmost on ties); pieces left outside the vocabulary fall back to byte tokens. No
 * BOS: the result is text, not a prompt.
 */
export function tokenizeSpm(text: string, vocabulary: SpmVocabulary): number[] {
  const ids = new Map<string, number>();
  vocabulary.tokens.forEach((token, id) => {
    if (!ids.has(token)) ids.set(token, id);
  });
  const tokenIds: number[] = [];
  // No llama vocabulary entry has "▁" after its first character (runs of "▁" aside, which
  // collapsed whitespace never produces), so words never merge with each other.
  const words = `▁${text.replace(/ /g, '▁')}`.split(/(?=▁)|(?<=\n)|(?=\n)/u);
  for (const word of words) {
    const symbols = Array.from(word);
    for (;;) {
      let best = -1;
      let bestScore = -Infinity;
      for (let i = 0; i + 1 < symbols.length; i++) {
        const id = ids.get(symbols[i]! + symbols[i + 1]!);
        if (id === undefined) continue;
        const score = vocabulary.scores[id] ?? 0;
        if (score > bestScore) {
          best = i;
          bestScore = score;
        }
      }
      if (best < 0) break;
      symbols.splice(best, 2, symbols[best]! + symbols[best + 1]!);
    }
    for (const symbol of symbols) {
      const id = ids.get(symbol);
      if (id !== undefined) {
        tokenIds.push(id);
        continue;
      }
      for (const byte of Buffer.from(symbol, 'utf8')) {
        const byteId = ids.get(`<0x${byte.toString(16).toUpperCase().padStart(2, '0')}>`);
        if (byteId === undefined) throw new Error(`vocabulary has no byte token for 0x${byte.toString(16)}`);
        tokenIds.push(byteId);
      }
    }
  }
  return tokenIds;
}

/**
 * A successor for every distinct token of `sequence`, forming one cycle through all of
 * them: pairs are taken in text order while they keep the map one-to-one and acyclic, and
 * the resulting runs are chained in order of first appearance. One cycle through hundreds
 * of tokens means greedy output never settles into a short loop, and reads as stretches of
 * the text.
 */
export function successorCycle(sequence: readonly number[], continuesWord: (token: number) => boolean = () => false): Map<number, number> {
  const successor = new Map<number, number>();
  const predecessor = new Map<number, number>();
  const firstSeen: number[] = [];
  const seen = new Set<number>();
  for (const token of sequence) {
    if (!seen.has(token)) firstSeen.push(token);
    seen.add(token);
  }
  const headOf = (token: number): number => {
    let head = token;
    for (let previous = predecessor.get(head); previous !== undefined; previous = predecessor.get(head)) head = previous;
    return head;
  };
  // Pieces inside a word first, so that a word's pieces stay together and the stitches fall
  // between words ("built the" rather than "builtighthouse").
  for (const insideWords of [true, false]) {
    for (let i = 0; i + 1 < sequence.length; i++) {
      const from = sequence[i]!;
      const to = sequence[i + 1]!;
      if (insideWords && !continuesWord(to)) continue;
      if (from === to || successor.has(from) || predecessor.has(to) || headOf(from) === to) continue;
      successor.set(from, to);
      predecessor.set(to, from);
    }
  }
  const heads = firstSeen.filter((token) => !predecessor.has(token));
  const tailOf = (token: number): number => {
    let tail = token;
    for (let next = successor.get(tail); next !== undefined; next = successor.get(tail)) tail = next;
    return tail;
  };
  const tails = heads.map(tailOf);
  heads.forEach((_, index) => {
    const next = heads[(index + 1) % heads.length]!;
    successor.set(tails[index]!, next);
  });
  return successor;
}

/** One independent generator per tensor, so a tensor's values do not depend on the order in which others are written. */
function tensorRandom(seed: number, name: string): () => number {
  let hash = seed >>> 0;
  for (const char of name) hash = Math.imul(hash ^ char.charCodeAt(0), 0x01000193) >>> 0;
  return seededRandom(hash);
}

function halfTensor(name: string, shape: [number, number], fill: (values: Float32Array) => void): GgufTensor {
  return {
    name,
    shape,
    type: GgmlType.F16,
    data: () => {
      const values = new Float32Array(shape[0] * shape[1]);
      fill(values);
      const halves = new Uint16Array(values.length);
      for (let i = 0; i < values.length; i++) halves[i] = toHalf(values[i]!);
      return new Uint8Array(halves.buffer);
    },
  };
}

function uniformTensor(name: string, shape: [number, number], seed: number, scale: number): GgufTensor {
  return halfTensor(name, shape, (values) => {
    const random = tensorRandom(seed, name);
    // Uniform on [-scale, scale]: small weights keep activations finite through every layer.
    for (let i = 0; i < values.length; i++) values[i] = (random() * 2 - 1) * scale;
  });
}

function onesTensor(name: string, length: number): GgufTensor {
  return { name, shape: [length], type: GgmlType.F32, data: () => new Uint8Array(new Float32Array(length).fill(1).buffer) };
}

function unitRows(count: number, width: number, normal: () => number): Float32Array {
  const rows = new Float32Array(count * width);
  for (let row = 0; row < count; row++) {
    let sum = 0;
    for (let i = 0; i < width; i++) {
      const value = normal();
      rows[row * width + i] = value;
      sum += value * value;
    }
    const inverse = 1 / Math.sqrt(sum);
    for (let i = 0; i < width; i++) rows[row * width + i]! *= inverse;
  }
  return rows;
}

/** The text-derived structure the embedding and output head are built from. */
export interface DemoSuccessorMap {
  /** Tokens of the text, in order. */
  sequence: number[];
  /** The greedy successor of every distinct text token. */
  successor: Map<number, number>;
  /** For every text token, the distinct tokens that precede it anywhere in the text. */
  predecessors: Map<number, Set<number>>;
}

export function buildSuccessorMap(text: string, vocabulary: SpmVocabulary): DemoSuccessorMap {
  const sequence = tokenizeSpm(normalizeDemoText(text), vocabulary);
  const predecessors = new Map<number, Set<number>>();
  for (let i = 0; i + 1 < sequence.length; i++) {
    const set = predecessors.get(sequence[i + 1]!) ?? new Set<number>();
    set.add(sequence[i]!);
    predecessors.set(sequence[i + 1]!, set);
  }
  const continuesWord = (token: number) => /^[\p{L}\p{N}]/u.test(vocabulary.tokens[token] ?? '');
  return { sequence, successor: successorCycle(sequence, continuesWord), predecessors };
}

function vocabularyOf(entries: readonly GgufEntry[]): SpmVocabulary {
  const find = (key: string) => entries.find((entry) => entry.key === key)?.value as readonly unknown[] | undefined;
  const tokens = find('tokenizer.ggml.tokens') as readonly string[] | undefined;
  const scores = find('tokenizer.ggml.scores') as readonly number[] | undefined;
  if (!tokens || !scores || tokens.length !== scores.length) throw new Error('vocabulary lacks tokens or scores');
  return { tokens, scores };
}

/** The model's metadata: a llama architecture of this shape, marked synthetic, with the real tokenizer's entries. */
function metadataEntries(shape: SyntheticModelShape, tokenizer: GgufEntry[], vocabSize: number): GgufEntry[] {
  const headDim = shape.embeddingLength / shape.headCount;
  const u32 = (key: string, value: number): GgufEntry => ({ key, type: GGUFValueType.UINT32, value });
  const f32 = (key: string, value: number): GgufEntry => ({ key, type: GGUFValueType.FLOAT32, value });
  const str = (key: string, value: string): GgufEntry => ({ key, type: GGUFValueType.STRING, value });
  return [
    str('general.architecture', 'llama'),
    str('general.name', 'Infer Lab synthetic demo'),
    str(
      'general.description',
      'Synthetic model generated by Infer Lab, not trained: weights from a fixed seed, shaped so that greedy output follows the word order of a short English text. Its output is stitched phrases; its compute is real.',
    ),
    u32('general.file_type', 1), // mostly F16
    u32('general.alignment', 32),
    { key: SYNTHETIC_MARKER_KEY, type: GGUFValueType.BOOL, value: true },
    u32('inferlab.seed', shape.seed),
    u32('llama.vocab_size', vocabSize),
    u32('llama.context_length', shape.contextLength),
    u32('llama.embedding_length', shape.embeddingLength),
    u32('llama.block_count', shape.blockCount),
    u32('llama.feed_forward_length', shape.feedForwardLength),
    u32('llama.attention.head_count', shape.headCount),
    u32('llama.attention.head_count_kv', shape.headCountKv),
    u32('llama.rope.dimension_count', headDim),
    f32('llama.rope.freq_base', 10000),
    f32('llama.attention.layer_norm_rms_epsilon', 1e-5),
    ...tokenizer,
    str('tokenizer.chat_template', DEMO_CHAT_TEMPLATE),
  ];
}

/** Every transformer block's norms and weights: uniform from the seed, scaled so activations stay in range. */
function blockTensors(shape: SyntheticModelShape, design: DemoWeightDesign): GgufTensor[] {
  const e = shape.embeddingLength;
  const kvWidth = (e / shape.headCount) * shape.headCountKv;
  const scale = 1 / Math.sqrt(e);
  const seed = shape.seed;
  const tensors: GgufTensor[] = [];
  for (let block = 0; block < shape.blockCount; block++) {
    const prefix = `blk.${block}`;
    tensors.push(
      onesTensor(`${prefix}.attn_norm.weight`, e),
      uniformTensor(`${prefix}.attn_q.weight`, [e, e], seed, scale),
      uniformTensor(`${prefix}.attn_k.weight`, [e, kvWidth], seed, scale),
      uniformTensor(`${prefix}.attn_v.weight`, [e, kvWidth], seed, scale),
      uniformTensor(`${prefix}.attn_output.weight`, [e, e], seed, scale * design.attentionOutputScale),
      onesTensor(`${prefix}.ffn_norm.weight`, e),
      uniformTensor(`${prefix}.ffn_gate.weight`, [e, shape.feedForwardLength], seed, scale),
      uniformTensor(`${prefix}.ffn_up.weight`, [e, shape.feedForwardLength], seed, scale),
      uniformTensor(
        `${prefix}.ffn_down.weight`,
        [shape.feedForwardLength, e],
        seed,
        design.feedForwardOutputScale / Math.sqrt(shape.feedForwardLength),
      ),
    );
  }
  return tensors;
}

/**
 * Writes a llama-architecture model with synthetic weights from a fixed seed and a real
 * tokenizer. Nothing is trained: the weights are shaped (see `DemoWeightDesign`) so that
 * greedy output follows the word order of a short English text, and quantization noise
 * rarely changes it. Its compute, memory use and quantization behave like a real model's
 * of the same shape.
 */
export async function writeSyntheticModel(
  file: string,
  vocabFile: string,
  shape: SyntheticModelShape = DEMO_MODEL_SHAPE,
  options: { text?: string; design?: DemoWeightDesign } = {},
): Promise<void> {
  const { entries, tensors } = await syntheticModel(vocabFile, shape, options);
  writeGgufFile(file, entries, tensors);
}

/**
 * The GGUF `writeSyntheticModel` writes: its metadata, and tensors whose bytes are computed only
 * when asked for, in file order (what depends only on the shape, such as the memory a server
 * reserves for it, needs none of them).
 */
export async function syntheticModel(
  vocabFile: string,
  shape: SyntheticModelShape = DEMO_MODEL_SHAPE,
  options: { text?: string; design?: DemoWeightDesign } = {},
): Promise<{ entries: GgufEntry[]; tensors: GgufTensor[] }> {
  const { entries: tokenizer, vocabSize } = await readTokenizerEntries(vocabFile);
  const design = options.design ?? DEMO_WEIGHT_DESIGN;
  const map = buildSuccessorMap(options.text ?? fs.readFileSync(demoModelTextFile(), 'utf8'), vocabularyOf(tokenizer));
  const entries = metadataEntries(shape, tokenizer, vocabSize);

  const e = shape.embeddingLength;
  const textTokens = [...map.successor.keys()];
  let drawn: { directions: Float32Array; anchorOf: Int32Array } | null = null;
  // Drawn once, on the first tensor that reads them, in this order: the bytes stay those of the seed.
  const draw = () => {
    if (drawn) return drawn;
    const random = seededRandom(shape.seed);
    // Random directions in 512 dimensions are nearly orthogonal (|cos| rarely above 0.2), which
    // is what gives the head its margin: only the row built from the current token lines up.
    const directions = unitRows(vocabSize, e, gaussian(random));
    const textIndex = new Set(textTokens);
    const anchorOf = new Int32Array(vocabSize);
    for (let token = 0; token < vocabSize; token++)
      anchorOf[token] = textIndex.has(token) ? token : textTokens[Math.floor(random() * textTokens.length)]!;
    drawn = { directions, anchorOf };
    return drawn;
  };
  const predecessorOf = new Map<number, number>();
  for (const [from, to] of map.successor) predecessorOf.set(to, from);

  const embedding = halfTensor('token_embd.weight', [e, vocabSize], (values) => {
    // A token outside the text points mostly the way its anchor does, so every prompt ends
    // on a clear successor; its own random part keeps it distinct for attention.
    const own = Math.sqrt(1 - design.anchorShare ** 2);
    const { directions, anchorOf } = draw();
    for (let token = 0; token < vocabSize; token++) {
      const anchor = anchorOf[token]!;
      for (let i = 0; i < e; i++) {
        const value =
          anchor === token
            ? directions[token * e + i]!
            : design.anchorShare * directions[anchor * e + i]! + own * directions[token * e + i]!;
        values[token * e + i] = design.embeddingNorm * value;
      }
    }
  });
  const head = halfTensor('output.weight', [e, vocabSize], (values) => {
    const { directions } = draw();
    const tail = unitRows(vocabSize, e, gaussian(tensorRandom(shape.seed, 'output.weight')));
    for (let token = 0; token < vocabSize; token++) {
      const row = token * e;
      const chosen = predecessorOf.get(token);
      if (chosen === undefined) {
        for (let i = 0; i < e; i++) values[row + i] = design.headNorm * design.tailNorm * tail[row + i]!;
        continue;
      }
      for (let i = 0; i < e; i++) values[row + i] = design.headNorm * directions[chosen * e + i]!;
      // Other words seen before this one earn it a smaller logit: plausible alternatives,
      // as a trained model spreads probability, without ever outranking the chosen successor.
      // Shared by 1/sqrt(count), so a word that follows many others ("the") does not grow a
      // long row that outscores real successors on unrelated inputs.
      const others = [...(map.predecessors.get(token) ?? [])].filter((other) => other !== chosen);
      const weight = (design.headNorm * design.alternateWeight) / Math.sqrt(Math.max(1, others.length));
      for (const other of others) {
        for (let i = 0; i < e; i++) values[row + i]! += weight * directions[other * e + i]!;
      }
    }
  });

  return { entries, tensors: [embedding, onesTensor('output_norm.weight', e), head, ...blockTensors(shape, design)] };
}
