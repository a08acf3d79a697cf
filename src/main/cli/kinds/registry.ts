import type { ExperimentKind } from '../../../shared/contract/experiments';
import { ADAPTER_CLI } from './adapter';
import { CAPACITY_CLI } from './capacity';
import type { CliKind } from './cli-kind';
import { KVCACHE_CLI } from './kvcache';
import { QUANT_CLI } from './quant';
import { SPECULATIVE_CLI } from './speculative';
import { SWEEP_CLI } from './sweep';
import { WARMCOLD_CLI } from './warmcold';

export type { CliKind } from './cli-kind';

/** The CLI registry: one line per kind. */
export const CLI_KINDS: { [K in ExperimentKind]: CliKind<K> } = {
  quant: QUANT_CLI,
  warmcold: WARMCOLD_CLI,
  sweep: SWEEP_CLI,
  capacity: CAPACITY_CLI,
  speculative: SPECULATIVE_CLI,
  kvcache: KVCACHE_CLI,
  adapter: ADAPTER_CLI,
};

/** The entry of a kind, taking any spec of it: the registry is keyed by the literal the spec carries, which TypeScript cannot follow through an index. */
export const cliKindOf = (kind: ExperimentKind): CliKind => CLI_KINDS[kind] as unknown as CliKind;
