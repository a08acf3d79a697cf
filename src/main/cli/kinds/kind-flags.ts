import type { ExperimentKind, ExperimentSpecOf, StartExperimentSpec } from '../../../shared/contract';
import type { QuantsFromHub } from '../quant-from-hub';

/** A flag as `parseArgs` declares it. */
export type FlagDeclaration = { type: 'string' } | { type: 'boolean' };

/** Every flag's value after parsing, read by name. */
export type FlagValues = Readonly<Record<string, string | boolean | string[] | undefined>>;

export interface KindFlagContext {
  /** Refuses the command with the message and the usage. */
  usage: (message: string) => never;
  slo: NonNullable<StartExperimentSpec['constraints']>['slo'];
}

/** What a kind's own flags add to the spec, and for quant --from, the hub pull to make before it is checked. */
export interface KindFlagResult<K extends ExperimentKind = ExperimentKind> {
  fields: Partial<ExperimentSpecOf<K>>;
  fromHub?: QuantsFromHub | null;
  /** The flags name what is compared in place of --model (quant --files or --from). */
  replacesModel?: boolean;
}

/** The flags only one kind takes, and the spec fields they set. */
export interface KindFlags<K extends ExperimentKind = ExperimentKind> {
  flags: Record<string, FlagDeclaration>;
  /** Another kind's flag a user of this kind may reach for, and what this kind takes instead. */
  insteadOf?: Record<string, string>;
  fromFlags: (values: FlagValues, context: KindFlagContext) => KindFlagResult<K>;
}

/** A string flag's text (undefined when absent). */
export const text = (values: FlagValues, flag: string): string | undefined => {
  const value = values[flag];
  return typeof value === 'string' ? value : undefined;
};

/** A comma-separated list, trimmed, empty items dropped. */
export const listOf = (value: string): string[] =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
