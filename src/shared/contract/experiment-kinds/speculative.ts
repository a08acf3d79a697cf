import { Type, type Static } from '@sinclair/typebox';
import { Maybe, PathText } from '../schema-parts';
import { experimentSpec, FIXED_DESIGN_FIELD, type ProtocolBase } from './common';

export const SpeculativeSpecSchema = experimentSpec(
  'speculative',
  {
    draftModel: Maybe(PathText, 'The draft model (a demo ref or GGUF path) that drafts for model.'),
    draftMax: Maybe(
      Type.Array(Type.Number(), { maxItems: 16 }),
      'The draft limits (tokens drafted per step) each compared with speculative decoding off; null for 4, 8 and 16.',
    ),
    fixed: FIXED_DESIGN_FIELD,
  },
  'Speculative decoding with a draft model at several draft limits against none.',
);
export type SpeculativeSpec = Static<typeof SpeculativeSpecSchema>;

/** What a speculative-decoding experiment records of how it ran. */
export interface SpeculativeProtocol extends ProtocolBase<'speculative'> {
  model: string;
  draft_model: string;
  draft_max: number[];
  concurrency: number;
  repeats: number;
  requests_per_condition: number | null;
  windows: string;
  greedy_equivalence: string;
}
