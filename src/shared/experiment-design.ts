import type { ExperimentStopping } from './contract/experiments';
import { EXPERIMENT_DEFAULTS } from './experiment-defaults';

/**
 * The looks of an experiment of `repeats` windows per condition: halfway (once a verdict is
 * possible) and at the end. Two looks keep the last one's boundary within a hair of the fixed
 * design's, so power at the maximum is kept (test/unit/sequential-verdict-simulation.test.ts);
 * more looks stop a little sooner on large effects and lose power on small ones.
 */
export function sequentialLooks(repeats: number, minWindowsPerSide: number): number[] {
  const halfway = Math.max(minWindowsPerSide, Math.ceil(repeats / 2), 2);
  return halfway < repeats ? [halfway, repeats] : [repeats];
}

/** The windows per condition at which a design looks at its verdicts: the last only, when fixed (`--fixed`). */
export function designLooks(design: { repeats: number; fixed: boolean }): number[] {
  return design.fixed ? [design.repeats] : sequentialLooks(design.repeats, EXPERIMENT_DEFAULTS.minWindowsPerSide);
}

/** How many windows an experiment ran of its most, under which design, and why it stopped there: one line. */
export function stoppingLine(stopping: ExperimentStopping): string {
  const design = stopping.design === 'fixed' ? 'fixed design' : `sequential design, looks at ${stopping.looks.join(' and ')} windows`;
  return `windows: ${stopping.windows_run} of ${stopping.windows_max} per condition (${design}): ${stopping.reason}`;
}
