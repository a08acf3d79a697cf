import type { ExperimentKind, ExperimentSpecOf } from '../../../shared/contract';
import type { ConditionResult, ExperimentResult } from '../../../shared/contract/experiments';
import type { ServerProfile } from '../../../shared/contract/server';
import type { ServiceContainer } from '../../services';
import type { ProgressWriter } from '../progress';
import type { QuantsFromHub } from '../quant-from-hub';
import type { KindFlags } from './kind-flags';
import type { KindText } from './kind-text';

/** What a kind is handed to finish its spec from the hub once the services are open. */
export interface FromHubContext {
  profile: ServerProfile;
  container: ServiceContainer;
  progress: ProgressWriter;
  signal: AbortSignal;
}

/**
 * What one kind changes in the terminal's experiment table; everything else is shared
 * (cli/experiment-table.ts). Declared apart from the registry (registry.ts), which imports the
 * entries, so that no entry imports the registry back.
 */
export interface CliKind<K extends ExperimentKind = ExperimentKind> {
  /** What its command says of itself: usage, help, the methods it calls. */
  text: KindText;
  /** Earlier names of the kind's command, still taken so that scripts written with them keep working. */
  formerNames?: string[];
  /** The flags only this kind takes (another kind's command refuses them by name) and the spec fields they set. */
  options?: KindFlags<K>;
  /** Completes the spec from the hub request its flags made (`fromHub`): planned and pulled, before the spec is checked. */
  fromHub?: (spec: ExperimentSpecOf<K>, request: QuantsFromHub, context: FromHubContext) => Promise<void>;
  /** The kind's own whole table, where the shared condition table does not fit it; null falls back to the shared one. */
  table?: (result: ExperimentResult) => string | null;
  /** Columns added to the shared condition table. */
  columns?: { header: string[]; cells: (condition: ConditionResult) => string[] };
  /** Lines printed under the shared condition table (quality against the baseline). */
  lines?: (result: ExperimentResult) => string[];
  /** Energy and bandwidth per condition do not apply. */
  withoutEfficiency?: boolean;
}
