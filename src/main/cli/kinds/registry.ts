import type { ConditionResult, ExperimentKind, ExperimentResult } from '../../../shared/contract/experiments';
import { CAPACITY_CLI } from './capacity';
import type { KindFlags } from './kind-flags';
import { KVCACHE_CLI } from './kvcache';
import { QUANT_CLI } from './quant';
import { SPECULATIVE_CLI } from './speculative';
import { SWEEP_CLI } from './sweep';
import { WARMCOLD_CLI } from './warmcold';

/** What one kind changes in the terminal's experiment table; everything else is shared (cli/experiment-table.ts). */
export interface CliKind<K extends ExperimentKind = ExperimentKind> {
  /** The flags only this kind takes (another kind's command refuses them by name) and the spec fields they set. */
  options?: KindFlags<K>;
  /** The kind's own whole table, where the shared condition table does not fit it; null falls back to the shared one. */
  table?: (result: ExperimentResult) => string | null;
  /** Columns added to the shared condition table. */
  columns?: { header: string[]; cells: (condition: ConditionResult) => string[] };
  /** Lines printed under the shared condition table (quality against the baseline). */
  lines?: (result: ExperimentResult) => string[];
  /** Energy and bandwidth per condition do not apply. */
  withoutEfficiency?: boolean;
}

/** The CLI registry: one line per kind. */
export const CLI_KINDS: { [K in ExperimentKind]: CliKind<K> } = {
  quant: QUANT_CLI,
  warmcold: WARMCOLD_CLI,
  sweep: SWEEP_CLI,
  capacity: CAPACITY_CLI,
  speculative: SPECULATIVE_CLI,
  kvcache: KVCACHE_CLI,
};
