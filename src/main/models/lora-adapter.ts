import path from 'node:path';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { readGgufHeaderAsync, type GgufHeader, type GgufTensorHeader } from './gguf-reader';

/** What an adapter holds: its rank and the model tensors it changes. */
export interface LoraAdapterFacts {
  rank: number;
  alpha: number | null;
  targets: string[];
}

const refuse = (file: string, problem: string): never => {
  throw new AppError(ErrorCode.InvalidInput, `loraAdapter ${file}: ${problem}`);
};

/** The pairs of an adapter, by the model tensor each changes: `<tensor>.lora_a` with ne = [n_in, r], `.lora_b` with ne = [r, n_out]. */
function pairsOf(file: string, header: GgufHeader): Map<string, { a: GgufTensorHeader; b: GgufTensorHeader }> {
  const halves = new Map<string, { a?: GgufTensorHeader; b?: GgufTensorHeader }>();
  for (const tensor of header.tensors) {
    const match = /^(.+)\.lora_(a|b)$/.exec(tensor.name);
    if (!match) continue;
    const pair = halves.get(match[1]!) ?? {};
    pair[match[2] as 'a' | 'b'] = tensor;
    halves.set(match[1]!, pair);
  }
  const pairs = new Map<string, { a: GgufTensorHeader; b: GgufTensorHeader }>();
  for (const [target, { a, b }] of halves) {
    if (!a || !b) refuse(file, `${target} has lora_${a ? 'a' : 'b'} without lora_${a ? 'b' : 'a'}`);
    pairs.set(target, { a: a!, b: b! });
  }
  if (pairs.size === 0) refuse(file, 'holds no lora_a/lora_b tensor pairs');
  return pairs;
}

/** Whether a GGUF header is a LoRA adapter's (general.type "adapter", adapter.type "lora"). */
export function isLoraAdapterHeader(header: GgufHeader): boolean {
  return header.metadata.get('general.type') === 'adapter' && header.metadata.get('adapter.type') === 'lora';
}

/** What an adapter's header says of itself, before any model is set beside it: its architecture, rank, alpha and targets. */
export function loraAdapterFacts(adapterName: string, adapter: GgufHeader): LoraAdapterFacts & { architecture: string | null } {
  const pairs = pairsOf(adapterName, adapter);
  const alpha = adapter.metadata.get('adapter.lora.alpha');
  const architecture = adapter.metadata.get('general.architecture');
  return {
    architecture: typeof architecture === 'string' ? architecture : null,
    rank: Math.max(...[...pairs.values()].map(({ a }) => a.shape[1]!)),
    alpha: typeof alpha === 'number' ? alpha : null,
    targets: [...pairs.keys()],
  };
}

/**
 * Checks, before anything is launched, that a file is a LoRA adapter made for the model it is
 * applied to: a GGUF adapter (general.type "adapter", adapter.type "lora") of the model's
 * architecture, each pair of the same rank and shaped for the model tensor it changes. llama-server
 * refuses the others at load with a message that names neither file.
 */
export async function assertLoraAdapterFits(adapterFile: string, modelFile: string): Promise<LoraAdapterFacts> {
  // llama-server splits an adapter argument on commas (a list) and a scaled one on its colon.
  if (/[,:]/.test(adapterFile))
    refuse(adapterFile, 'llama-server cannot take an adapter path with a comma or a colon in it: move or link the file');
  const read = (file: string) =>
    readGgufHeaderAsync(file).catch((error: Error) =>
      refuse(adapterFile, `${path.basename(file)} is not a readable GGUF file: ${error.message}`),
    );
  const [adapter, model] = await Promise.all([read(adapterFile), read(modelFile)]);
  return checkLoraAdapterHeaders(adapterFile, adapter, path.basename(modelFile), model);
}

/**
 * The same check on headers already read (a hub file's, read by range before it is downloaded):
 * the adapter's facts, or an InvalidInput naming `adapterName` and what does not fit `modelName`.
 */
export function checkLoraAdapterHeaders(adapterFile: string, adapter: GgufHeader, modelName: string, model: GgufHeader): LoraAdapterFacts {
  const meta = (key: string) => adapter.metadata.get(key);
  if (!isLoraAdapterHeader(adapter))
    refuse(
      adapterFile,
      `not a LoRA adapter (general.type ${JSON.stringify(meta('general.type') ?? null)}, adapter.type ${JSON.stringify(meta('adapter.type') ?? null)}): give a GGUF adapter made with convert_lora_to_gguf.py, or none`,
    );
  const architecture = model.metadata.get('general.architecture');
  if (meta('general.architecture') !== architecture)
    refuse(adapterFile, `made for ${String(meta('general.architecture'))} models, not for ${String(architecture)} (${modelName})`);
  const tensors = new Map(model.tensors.map((tensor) => [tensor.name, tensor]));
  const ranks = new Set<number>();
  const pairs = pairsOf(adapterFile, adapter);
  for (const [target, { a, b }] of pairs) {
    const base = tensors.get(target);
    if (!base) refuse(adapterFile, `changes ${target}, which ${modelName} does not have: an adapter for another model`);
    if (a.shape[0] !== base!.shape[0] || b.shape[1] !== base!.shape[1] || a.shape[1] !== b.shape[0])
      refuse(
        adapterFile,
        `${target}: lora_a [${a.shape.join(', ')}] and lora_b [${b.shape.join(', ')}] do not fit the model's [${base!.shape.join(', ')}]: an adapter for another model size`,
      );
    ranks.add(a.shape[1]!);
  }
  const alpha = meta('adapter.lora.alpha');
  return { rank: Math.max(...ranks), alpha: typeof alpha === 'number' ? alpha : null, targets: [...pairs.keys()] };
}
