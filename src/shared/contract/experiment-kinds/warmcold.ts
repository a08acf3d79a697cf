import { Type, type Static } from '@sinclair/typebox';
import { Maybe } from '../schema-parts';
import { experimentSpec, FIXED_DESIGN_FIELD, type ProtocolBase } from './common';

export const WarmColdSpecSchema = experimentSpec(
  'warmcold',
  {
    coldStarts: Maybe(Type.Number(), 'Fresh server starts for cold-process, spread over the windows.'),
    skipCacheReset: Type.Optional(Type.Boolean({ description: 'Leave the prompt cache on in cold-cache (its evidence must flag it).' })),
    fixed: FIXED_DESIGN_FIELD,
  },
  'A warm server against a cold prompt cache and a cold process.',
);
export type WarmColdSpec = Static<typeof WarmColdSpecSchema>;

/** What a warm/cold experiment records of how it ran. */
export interface WarmColdProtocol extends ProtocolBase<'warmcold'> {
  model: string;
  repeats: number;
  concurrency: number;
  requests_per_window: number | null;
  cold_starts: number;
  cold_starts_per_window: number[];
  skip_cache_reset: boolean;
  /** How each condition was made, in words. */
  conditions: Record<'cold-process' | 'cold-cache' | 'warm-cache', string>;
  evidence: string;
}
