import { Type, type Static } from '@sinclair/typebox';
import { Maybe, Nullable, Strict, type SloSpec } from '../schema-parts';
import { experimentSpec, type ProtocolBase } from './common';

export const CapacitySpecSchema = experimentSpec(
  'capacity',
  {
    capacity: Maybe(
      Type.Object(
        {
          by: Type.Union([Type.Literal('rate'), Type.Literal('concurrency'), Type.Literal('users')], {
            description: 'Open-loop arrival rate, closed-loop concurrency, or concurrent users of a conversation workload.',
          }),
          percentile: Type.Number({ description: 'The percentile every SLO must hold at (50 to 99.9).' }),
          start: Nullable(Type.Number({ description: 'The first load tried; null for 1.' })),
          maxLoad: Nullable(Type.Number({ description: 'The highest load the search may try; null for the default.' })),
          keepCache: Type.Boolean({ description: 'Keep the prompt cache between steps (a workload meant to reuse prefixes).' }),
        },
        Strict,
      ),
      'How the load is searched; the SLO is constraints.slo and requestsPerWindow the requests per look.',
    ),
  },
  'The highest load at which the SLO still holds at a percentile.',
);
export type CapacitySpec = Static<typeof CapacitySpecSchema>;

/** What a capacity search records of how it ran. */
export interface CapacityProtocol extends ProtocolBase<'capacity'> {
  model: string;
  by: 'rate' | 'concurrency' | 'users';
  percentile: number;
  slo: SloSpec;
  requests_per_look: number;
  /** The search's settings (bounds, growth, tolerance, error control) and the SLO metrics it judges. */
  search: Record<string, unknown> & { metrics: string[] };
  prompt_cache: string;
  rule: string;
}
