import type { ExperimentStopping, VerdictRow } from '../../shared/contract/experiments';
import { designLooks } from '../../shared/experiment-design';
import { EXPERIMENT_DEFAULTS } from '../../shared/experiment-defaults';
import { DEFAULT_VERDICT_SETTINGS, type VerdictSettings } from '../metrics/window-verdicts';
import { windowSchedule } from './windows';

/** What a look found of the verdicts an experiment's answer rests on: the comparisons still open. */
export type OpenVerdicts = (settings: VerdictSettings) => string[];

/** The verdicts' settings for a design: one look of the sequential design, or the fixed design. */
export function verdictSettingsOf(stopping: Pick<ExperimentStopping, 'design' | 'looks'>): VerdictSettings {
  return stopping.design === 'sequential'
    ? { ...DEFAULT_VERDICT_SETTINGS, sequential: { looks: stopping.looks } }
    : DEFAULT_VERDICT_SETTINGS;
}

/** Names a verdict row for a list of what is open: `q4_k_m tpot_ms p95`. */
export const openName = (row: VerdictRow): string => `${row.b} ${row.metric}`;

/** What a look that did not end the experiment found, as its progress line says it. */
function lookLine(windowsRun: number, windowsMax: number, open: readonly string[], nextLook: number): string {
  const named = `${open.slice(0, 4).join(', ')}${open.length > 4 ? ', …' : ''}`;
  return `look after ${windowsRun} of ${windowsMax} windows: ${open.length} verdict(s) the answer needs still open (${named}); going on to ${nextLook}`;
}

/**
 * Runs each condition's windows in rotated rounds (windows.ts). Sequential, it looks at the verdicts
 * after the rounds the design names and stops once none its answer needs is open; fixed (`--fixed`),
 * it runs every round. Says how many ran and why, and at each look before the last what it found.
 */
export async function runWindowRounds<T>(
  conditions: readonly T[],
  design: { repeats: number; fixed: boolean },
  runOne: (window: number, condition: T) => Promise<void>,
  openAfter: OpenVerdicts,
  onStatus?: (line: string) => void,
): Promise<ExperimentStopping> {
  const looks = designLooks(design);
  // One look is the fixed design, whether asked for or because the windows are too few to look halfway.
  const fixed = looks.length === 1;
  const stopping: ExperimentStopping = {
    design: fixed ? 'fixed' : 'sequential',
    looks,
    windows_run: 0,
    windows_max: design.repeats,
    reason: '',
    open: [],
  };
  const schedule = windowSchedule(conditions, design.repeats);
  for (let index = 0; index < schedule.length; index++) {
    const { window, condition } = schedule[index]!;
    await runOne(window, condition);
    const roundDone = schedule[index + 1]?.window !== window;
    if (!roundDone) continue;
    stopping.windows_run = window + 1;
    if (fixed || !looks.includes(window + 1)) continue;
    stopping.open = openAfter(verdictSettingsOf(stopping));
    if (window + 1 >= design.repeats) continue;
    if (stopping.open.length === 0) {
      stopping.reason = `every verdict the answer needs was decided after ${window + 1} of ${design.repeats} windows`;
      onStatus?.(`look after ${window + 1} of ${design.repeats} windows: every verdict the answer needs is decided; stopping here`);
      return stopping;
    }
    const nextLook = looks.find((look) => look > window + 1)!;
    onStatus?.(lookLine(window + 1, design.repeats, stopping.open, nextLook));
  }
  const minimum = EXPERIMENT_DEFAULTS.minWindowsPerSide;
  stopping.reason = design.fixed
    ? `the fixed design: all ${design.repeats} windows`
    : fixed
      ? `${design.repeats} window(s) are too few to look halfway (a verdict needs ${minimum} a side): all run`
      : stopping.open.length === 0
        ? `every verdict the answer needs was decided at the last look (${design.repeats} windows)`
        : `all ${design.repeats} windows: ${stopping.open.length} verdict(s) the answer needs were still open (${stopping.open.slice(0, 4).join(', ')}${stopping.open.length > 4 ? ', …' : ''})`;
  return stopping;
}
