import path from 'node:path';
import type { AdapterServing } from '../../../../shared/contract/experiment-kinds/adapter';

/** One condition of an adapter experiment: the base model alone, or with one adapter at a scale. */
export interface AdapterCondition {
  name: string;
  /** The adapter as given (demo:lora or a path); null for the base model. */
  file: string | null;
  scale: number;
  /** Served by a server holding every adapter of the experiment, the request choosing this one; otherwise on a server of its own. */
  swapped: boolean;
}

export const BASE_CONDITION: AdapterCondition = { name: 'base', file: null, scale: 0, swapped: false };

/** The name a swapped condition takes beside its own-server twin. */
const SWAPPED_SUFFIX = ' swapped';

/** llama-server's own bounds on a scale (--lora-scaled takes any float; beyond these an adapter is no longer what was trained). */
const SCALE_RANGE = { min: -4, max: 4 } as const;

/** A condition's name: the adapter's file name without .gguf (the demo's `demo-lora`), and its scale where it is not 1. */
function nameOf(file: string, scale: number): string {
  const stem = file.startsWith('demo:') ? file.replace(':', '-') : path.basename(file).replace(/\.gguf$/i, '');
  return scale === 1 ? stem : `${stem}@${scale}`;
}

/**
 * The conditions an adapter list names, the base model first, or the problem with the list in words:
 * one adapter at least, each scale a number from -4 to 4, no adapter and scale twice.
 */
export function adapterConditions(
  adapters: readonly { file: string; scale?: number | null }[],
  serving: AdapterServing = 'own',
): { conditions: AdapterCondition[] } | { problem: string } {
  if (adapters.length === 0) return { problem: 'name one adapter or more to compare with the base model (demo:lora, or a GGUF LoRA file)' };
  const conditions: AdapterCondition[] = [BASE_CONDITION];
  for (const [index, adapter] of adapters.entries()) {
    const file = typeof adapter?.file === 'string' ? adapter.file.trim() : '';
    if (file === '') return { problem: `adapter ${index + 1} names no file` };
    const scale = adapter.scale ?? 1;
    if (typeof scale !== 'number' || !Number.isFinite(scale) || scale < SCALE_RANGE.min || scale > SCALE_RANGE.max)
      return {
        problem: `adapter ${file}: scale must be a number from ${SCALE_RANGE.min} to ${SCALE_RANGE.max}, got ${JSON.stringify(adapter.scale)}`,
      };
    let name = nameOf(file, scale);
    if (conditions.some((condition) => condition.file === file && condition.scale === scale))
      return { problem: `adapter ${file} at scale ${scale} is named twice` };
    // Two files of one name in different folders stay apart by their place in the list.
    if (conditions.some((condition) => condition.name === name)) name = `${name} (${index + 1})`;
    conditions.push({ name, file, scale, swapped: false });
  }
  const own = conditions.slice(1);
  const swapped = own.map((condition) => ({ ...condition, name: `${condition.name}${SWAPPED_SUFFIX}`, swapped: true }));
  return {
    conditions: [BASE_CONDITION, ...(serving === 'swapped' ? swapped : serving === 'both' ? own.flatMap((c, i) => [c, swapped[i]!]) : own)],
  };
}

/**
 * Each adapter served both ways, as a comparison of its own: its own server against the server that
 * swaps it in per request, which is what hot-swapping costs (or saves) for that adapter.
 */
export function servingPairs(conditions: readonly AdapterCondition[]): [string, string][] {
  return conditions.flatMap((swapped): [string, string][] => {
    if (!swapped.swapped) return [];
    const own = conditions.find((condition) => !condition.swapped && condition.file === swapped.file && condition.scale === swapped.scale);
    return own ? [[own.name, swapped.name]] : [];
  });
}

/** The adapter files a swapping server loads, each once, in the order the experiment names them: a file's id is its place. */
export function swappedFiles(conditions: readonly AdapterCondition[]): string[] {
  return [...new Set(conditions.filter((condition) => condition.swapped).map((condition) => condition.file!))];
}

/**
 * What a swapped condition's every request asks of the server holding every adapter: its own adapter
 * at its scale and every other at 0 (llama-server applies an adapter a request does not name at its
 * loaded scale, so each is named).
 */
export function swappedChoice(condition: AdapterCondition, files: readonly string[]): { lora: { id: number; scale: number }[] } {
  return { lora: files.map((file, id) => ({ id, scale: file === condition.file ? condition.scale : 0 })) };
}

/** The profile settings of one condition: none for the base model; every adapter, loaded at scale 1, for a swapped one. */
export function adapterSettings(condition: AdapterCondition, files: readonly string[] = []): string[] {
  if (condition.file === null) return [];
  return condition.swapped
    ? [`loraAdapter=${files.join(',')}`, 'loraScale=1']
    : [`loraAdapter=${condition.file}`, `loraScale=${condition.scale}`];
}

/** llama-perplexity's flags for the same adapter, so the KL divergence is measured with it applied. */
export function adapterPerplexityArgs(condition: AdapterCondition, resolvedFile: string | null): string[] {
  return resolvedFile === null ? [] : ['--lora-scaled', `${resolvedFile}:${condition.scale}`];
}

/**
 * The memory the adapter's weights took, in MiB: the sum of the server's "<device> LoRA buffer
 * size" log lines over devices. Null when the log had none (the base model, another engine).
 */
export function loraMib(buffersMib: Record<string, number> | null | undefined): number | null {
  const lora = Object.entries(buffersMib ?? {}).filter(([key]) => / LoRA( model)?$/.test(key));
  return lora.length === 0 ? null : lora.reduce((sum, [, value]) => sum + value, 0);
}
