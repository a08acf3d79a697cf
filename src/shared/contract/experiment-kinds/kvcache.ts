import { Type, type Static } from '@sinclair/typebox';
import { Maybe, Name, Nullable, Strict } from '../schema-parts';
import { experimentSpec, FIXED_DESIGN_FIELD, KLD_TEXT_FILE_FIELD, type ProtocolBase, type WindowsAndPassProtocol } from './common';

export const KvCacheSpecSchema = experimentSpec(
  'kvcache',
  {
    kvCache: Maybe(
      Type.Object(
        {
          types: Type.Array(Name, {
            maxItems: 16,
            description: 'KV cache types, the first the baseline: q8_0 sets K and V, q8_0/f16 sets K and V apart.',
          }),
          contextSize: Nullable(Type.Number({ description: "The server's context in tokens; null keeps the profile's." })),
        },
        Strict,
      ),
      'The cache types to compare and the context they must hold.',
    ),
    kldTextFile: KLD_TEXT_FILE_FIELD,
    fixed: FIXED_DESIGN_FIELD,
  },
  'KV cache types compared on long documents: memory saved against details missed.',
);
export type KvCacheSpec = Static<typeof KvCacheSpecSchema>;

/** What a KV cache experiment records of how it ran. */
export interface KvCacheProtocol extends ProtocolBase<'kvcache'>, WindowsAndPassProtocol {
  model: string;
  cache_types: { name: string; k: string; v: string }[];
  /** Flash attention for every condition, in words: on (a quantized V cache needs it) or the profile's. */
  flash_attention: string;
  context_size: number;
}
