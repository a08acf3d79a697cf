import { KV_CACHE_TYPES } from '../../../../shared/profile-fields';

/** One condition of a KV cache experiment: the K and V cache types a fresh server runs with. */
export interface CacheCondition {
  /** As the user wrote it: `q8_0` (K and V alike) or `q8_0/f16` (K, then V). */
  name: string;
  k: string;
  v: string;
}

export const DEFAULT_CACHE_TYPES = ['f16', 'q8_0', 'q4_0'] as const;
const UNQUANTIZED = new Set(['f32', 'f16', 'bf16']);

/**
 * The conditions a list of cache types names, or the problem with it in words. The first is the
 * baseline every other is compared with, so it should be the unquantized cache the user runs today.
 */
export function cacheConditions(types: readonly string[]): { conditions: CacheCondition[] } | { problem: string } {
  if (types.length < 2) return { problem: `name two or more cache types, the first the baseline (f16,q8_0,q4_0); got ${types.length}` };
  const conditions: CacheCondition[] = [];
  for (const raw of types) {
    const name = raw.trim().toLowerCase();
    const parts = name.split('/');
    if (parts.length > 2 || parts.some((part) => !(KV_CACHE_TYPES as readonly string[]).includes(part)))
      return { problem: `"${raw}" is not a KV cache type: use one of ${KV_CACHE_TYPES.join(', ')}, or K/V such as q8_0/f16` };
    const [k, v = k] = parts as [string, string?];
    if (conditions.some((condition) => condition.k === k && condition.v === v))
      return { problem: `"${raw}" names the same K and V types as an earlier entry` };
    conditions.push({ name, k, v: v! });
  }
  return { conditions };
}

/**
 * llama.cpp stores a quantized V cache only with flash attention. Every condition then runs with
 * flash attention on, the baseline included, so that the cache type is the only difference.
 */
export function needsFlashAttention(conditions: readonly CacheCondition[]): boolean {
  return conditions.some((condition) => !UNQUANTIZED.has(condition.v));
}

/** The profile settings of one condition. */
export function cacheSettings(condition: CacheCondition, flashAttention: boolean, contextSize: number | null): string[] {
  return [
    `cacheTypeK=${condition.k}`,
    `cacheTypeV=${condition.v}`,
    ...(flashAttention ? ['flashAttention=on'] : []),
    ...(contextSize === null ? [] : [`contextSize=${contextSize}`]),
  ];
}

/** llama-perplexity's flags for the same cache, so the KL divergence is measured on it too. */
export function cachePerplexityArgs(condition: CacheCondition, flashAttention: boolean): string[] {
  return ['-ctk', condition.k, '-ctv', condition.v, ...(flashAttention ? ['-fa', 'on'] : [])];
}

/**
 * The KV cache the server allocated, in MiB: the sum of its "<device> KV buffer" lines, on every
 * device. Null when the log had none (another engine, or an older record).
 */
export function kvCacheMib(buffersMib: Record<string, number> | null | undefined): number | null {
  const kv = Object.entries(buffersMib ?? {}).filter(([key]) => key.endsWith(' KV'));
  return kv.length === 0 ? null : kv.reduce((sum, [, value]) => sum + value, 0);
}
