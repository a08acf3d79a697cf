/** Bytes per element of llama.cpp KV-cache types (-ctk/-ctv): block bytes over block elements. */
const KV_CACHE_BYTES: Record<string, number> = {
  f32: 4,
  f16: 2,
  bf16: 2,
  q8_0: 34 / 32,
  q4_0: 18 / 32,
  q4_1: 20 / 32,
  q5_0: 22 / 32,
  q5_1: 24 / 32,
  iq4_nl: 18 / 32,
};

export function kvBytesPerElement(cacheType: string): number | null {
  return KV_CACHE_BYTES[cacheType.toLowerCase()] ?? null;
}
