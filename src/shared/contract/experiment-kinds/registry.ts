/**
 * The contract's registry of experiment kinds: each kind's spec schema and protocol record, both
 * declared beside it in this folder, and its default workload, one line per kind in each list. specs.ts derives the spec
 * types from the union, experiments.ts the result types from the protocols.
 */
import { TaggedUnion } from '../schema-parts';
import { AdapterSpecSchema, type AdapterProtocol } from './adapter';
import { CapacitySpecSchema, type CapacityProtocol } from './capacity';
import { KvCacheSpecSchema, type KvCacheProtocol } from './kvcache';
import { QuantSpecSchema, type QuantProtocol } from './quant';
import { SpeculativeSpecSchema, type SpeculativeProtocol } from './speculative';
import { SweepSpecSchema, type SweepProtocol } from './sweep';
import { WarmColdSpecSchema, type WarmColdProtocol } from './warmcold';

/** Everything an experiment can be asked for, from the UI or the CLI: the fields every kind shares, then the kind's own. */
export const StartExperimentSpecSchema = TaggedUnion(
  'kind',
  [QuantSpecSchema, WarmColdSpecSchema, SweepSpecSchema, CapacitySpecSchema, SpeculativeSpecSchema, KvCacheSpecSchema, AdapterSpecSchema],
  'An experiment: the shared fields and those of its kind; optional fields take their defaults.',
);

/** The built-in workload each kind runs when none is named, for the services and the form alike. */
export const DEFAULT_EXPERIMENT_WORKLOAD = {
  quant: 'chat-short',
  warmcold: 'prefix-share',
  sweep: 'chat-short',
  capacity: 'chat-short',
  speculative: 'chat-short',
  kvcache: 'long-context',
  adapter: 'chat-short',
} as const;

/** Each kind's protocol record: what it stores of how it ran. */
export interface ExperimentProtocols {
  quant: QuantProtocol;
  warmcold: WarmColdProtocol;
  sweep: SweepProtocol;
  capacity: CapacityProtocol;
  speculative: SpeculativeProtocol;
  kvcache: KvCacheProtocol;
  adapter: AdapterProtocol;
}
