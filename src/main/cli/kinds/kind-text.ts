import type { MethodName } from '../../../shared/contract';

/**
 * What `inferlab experiment KIND` says of itself: its usage lines (each a form of the command from
 * the kind's name on; a line that opens with a bracket continues the one before), its help examples and notes, and the contract methods it calls. Kept
 * apart from the kind's table and flags so that help loads no command code.
 */
export interface KindText {
  /** Its line in `inferlab --help`: the command from the kind's name on, and what it answers. */
  overview: { synopsis: string; purpose: string };
  usage: string[];
  /** It takes the quality-gate flags (--vram-budget, --min-agreement, …), listed once for every such kind. */
  gates?: true;
  /** The contract methods it calls; starting and reporting the experiment when not given. */
  calls?: MethodName[];
  examples: string[];
  notes?: string;
}

/** Its usage lines as the command prints them: a form of the command per line, a bracket line continuing the one before. */
export const usageLinesOf = (text: KindText): string[] =>
  text.usage.map((line) => (line.startsWith('[') ? `    ${line}` : `inferlab experiment ${line}`));
