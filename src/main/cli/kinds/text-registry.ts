import type { ExperimentKind } from '../../../shared/contract';
import { ADAPTER_TEXT } from './adapter-text';
import { CAPACITY_TEXT } from './capacity-text';
import type { KindText } from './kind-text';
import { KVCACHE_TEXT } from './kvcache-text';
import { QUANT_TEXT } from './quant-text';
import { SPECULATIVE_TEXT } from './speculative-text';
import { SWEEP_TEXT } from './sweep-text';
import { WARMCOLD_TEXT } from './warmcold-text';

/** What each kind's command says of itself (usage, help, the methods it calls): one line per kind. */
export const KIND_TEXTS: Record<ExperimentKind, KindText> = {
  quant: QUANT_TEXT,
  warmcold: WARMCOLD_TEXT,
  sweep: SWEEP_TEXT,
  capacity: CAPACITY_TEXT,
  speculative: SPECULATIVE_TEXT,
  kvcache: KVCACHE_TEXT,
  adapter: ADAPTER_TEXT,
};

export const KIND_TEXT_ENTRIES = Object.entries(KIND_TEXTS) as [ExperimentKind, KindText][];

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
