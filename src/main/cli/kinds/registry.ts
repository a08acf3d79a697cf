import type { ExperimentKind } from '../../../shared/contract/experiments';
import { ADAPTER_CLI } from './adapter';
import { CAPACITY_CLI } from './capacity';
import type { CliKind } from './cli-kind';
import type { KindText } from './kind-text';
import { KVCACHE_CLI } from './kvcache';
import { QUANT_CLI } from './quant';
import { SPECULATIVE_CLI } from './speculative';
import { SWEEP_CLI } from './sweep';
import { WARMCOLD_CLI } from './warmcold';

export type { CliKind } from './cli-kind';

/** The CLI registry: one line per kind, each entry the kind's flags, table and text. */
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

/** Each kind with what its command says of itself, in the registry's order. */
export const KIND_TEXT_ENTRIES = Object.entries(CLI_KINDS).map(([kind, entry]) => [kind, entry.text]) as [ExperimentKind, KindText][];

/** Kinds as a sentence lists them: `quant, kvcache and adapter`. */
export const kindsInWords = (kinds: readonly string[]): string =>
  kinds.length > 1 ? `${kinds.slice(0, -1).join(', ')} and ${kinds.at(-1)}` : (kinds[0] ?? '');

/** The kinds that take the quality-gate flags and --kld-text. */
export const GATE_KINDS = KIND_TEXT_ENTRIES.filter(([, text]) => text.gates).map(([kind]) => kind);

/** The overview's column where each command's purpose starts. */
const PURPOSE_COLUMN = 46;

/** The kinds' lines in `inferlab --help`, a purpose beside a short command and under a long one. */
export function experimentOverviewLines(): string[] {
  return KIND_TEXT_ENTRIES.flatMap(([, { overview }]) => {
    const command = `  experiment ${overview.synopsis}`;
    return command.length < PURPOSE_COLUMN - 1
      ? [`${command.padEnd(PURPOSE_COLUMN)}${overview.purpose}`]
      : [command, `${' '.repeat(PURPOSE_COLUMN)}${overview.purpose}`];
  });
}
