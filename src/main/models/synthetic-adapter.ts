import { GGUFValueType } from '@huggingface/gguf';
import { gaussian, seededRandom, toHalf } from '../core/random';
import { GgmlType, writeGgufFile, type GgufEntry, type GgufTensor } from './gguf-writer';
import type { SyntheticModelShape } from './synthetic-model';

/**
 * The demo LoRA adapter: rank 8 on every layer's attention query and value projections (the
 * targets most fine-tunes start from), F16, seeded. Small random weights, so it costs what an
 * adapter of its rank costs at decode and changes the demo model's answers only a little.
 */
export const DEMO_ADAPTER_SHAPE = { rank: 8, alpha: 16, targets: ['attn_q', 'attn_v'] as const, weightStd: 0.02, seed: 20261206 };

export function writeSyntheticAdapter(file: string, model: SyntheticModelShape): void {
  const { rank, alpha, targets, weightStd, seed } = DEMO_ADAPTER_SHAPE;
  const normal = gaussian(seededRandom(seed));
  const f16 = (count: number) => () => {
    const halves = new Uint16Array(count);
    for (let index = 0; index < count; index++) halves[index] = toHalf(normal() * weightStd);
    return new Uint8Array(halves.buffer);
  };
  const headDim = model.embeddingLength / model.headCount;
  const outputs = { attn_q: model.embeddingLength, attn_v: headDim * model.headCountKv };
  const tensors: GgufTensor[] = [];
  for (let layer = 0; layer < model.blockCount; layer++)
    for (const target of targets) {
      const name = `blk.${layer}.${target}.weight`;
      tensors.push({
        name: `${name}.lora_a`,
        shape: [model.embeddingLength, rank],
        type: GgmlType.F16,
        data: f16(model.embeddingLength * rank),
      });
      tensors.push({ name: `${name}.lora_b`, shape: [rank, outputs[target]], type: GgmlType.F16, data: f16(rank * outputs[target]) });
    }
  const entries: GgufEntry[] = [
    { key: 'general.architecture', type: GGUFValueType.STRING, value: 'llama' },
    { key: 'general.type', type: GGUFValueType.STRING, value: 'adapter' },
    { key: 'general.name', type: GGUFValueType.STRING, value: 'Infer Lab demo LoRA adapter' },
    { key: 'adapter.type', type: GGUFValueType.STRING, value: 'lora' },
    { key: 'adapter.lora.alpha', type: GGUFValueType.FLOAT32, value: alpha },
  ];
  writeGgufFile(file, entries, tensors);
}
