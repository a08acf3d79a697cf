import { expect } from 'vitest';
import { EXPERIMENT_DEFAULTS } from '../../src/shared/experiment-defaults';
import {
  decideVerdicts,
  DEFAULT_VERDICT_SETTINGS,
  type VerdictQuestion,
  type VerdictSettings,
} from '../../src/main/metrics/window-verdicts';
import type { VerdictRow } from '../../src/shared/contract/experiments';
import { decideLook, everyVerdictSettled } from '../../src/main/metrics/sequential-verdicts';
import { seededRandom } from '../../src/main/core/random';

/**
 * A simulated experiment: a baseline and `candidates` other conditions, each run in
 * `windows` windows of `requestsPerWindow` requests. Every (condition, window) run gets its
 * own multiplicative drift (normal, sd `driftSd` of the mean) — the worst case, since drift
 * shared by neighbouring runs would cancel in the comparison — and every request its own
 * log-normal noise with coefficient of variation `requestCv`. `shift` multiplies the first
 * candidate's TTFT, and `tpotShift` (none by default) its TPOT.
 */
export interface SimulatedDesign {
  windows: number;
  requestsPerWindow: number;
  driftSd: number;
  requestCv: number;
  candidates: number;
  shift: number;
  tpotShift?: number;
}

function normal(random: () => number): number {
  // Box–Muller: one value per call is enough here.
  const u = Math.max(random(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}

/** The verdict questions of one simulated experiment, each side's windows in the order they ran. */
export function simulatedQuestions(design: SimulatedDesign, seed: number): VerdictQuestion[] {
  const random = seededRandom(seed);
  const sigma = Math.sqrt(Math.log(1 + design.requestCv ** 2));
  const window = (mean: number) => {
    const drift = Math.max(0.05, 1 + design.driftSd * normal(random));
    return Array.from({ length: design.requestsPerWindow }, () => mean * drift * Math.exp(sigma * normal(random) - sigma ** 2 / 2));
  };
  const condition = (ttftMean: number, tpotMean: number) => ({
    ttft: Array.from({ length: design.windows }, () => window(ttftMean)),
    tpot: Array.from({ length: design.windows }, () => window(tpotMean)),
  });
  const baseline = condition(100, 10);
  const others = Array.from({ length: design.candidates }, (_, i) =>
    i === 0 ? condition(100 * design.shift, 10 * (design.tpotShift ?? 1)) : condition(100, 10),
  );
  const questions: VerdictQuestion[] = [];
  others.forEach((other, i) => {
    for (const metric of ['ttft', 'tpot'] as const) {
      for (const statistic of ['p50', 'p95'] as const) {
        questions.push({
          metric: `${metric}_ms ${statistic}`,
          a: 'base',
          b: `c${i}`,
          aWindows: baseline[metric],
          bWindows: other[metric],
          statistic,
        });
      }
    }
  });
  return questions;
}

export function simulateExperiment(design: SimulatedDesign, seed: number, settings?: VerdictSettings) {
  return decideVerdicts(simulatedQuestions(design, seed), settings);
}

/** The questions as they stood after the first `windows` windows of each condition. */
export function firstWindows(questions: readonly VerdictQuestion[], windows: number): VerdictQuestion[] {
  return questions.map((question) => ({
    ...question,
    aWindows: question.aWindows.slice(0, windows),
    bWindows: question.bWindows.slice(0, windows),
  }));
}

/**
 * One simulated experiment run group-sequentially: looked at after each window from the first a
 * verdict allows, stopped when every verdict is settled or at `design.windows`.
 */
export function simulateSequential(
  design: SimulatedDesign,
  seed: number,
  options: { looks: readonly number[]; settled?: (rows: VerdictRow[]) => boolean; settings?: VerdictSettings },
) {
  const questions = simulatedQuestions(design, seed);
  const sequential = { ...(options.settings ?? DEFAULT_VERDICT_SETTINGS), sequential: { looks: options.looks } };
  for (const windows of options.looks) {
    const rows = decideLook(firstWindows(questions, windows), sequential);
    if (windows === options.looks.at(-1) || (options.settled ?? everyVerdictSettled)(rows)) return { rows, windows };
  }
  throw new Error('no looks');
}

/** Window drift (sd of the mean) in the A/A cells: none, the drift the defaults are built for, and twice that. */
export const AA_DRIFTS = [0, 0.05, 0.1];
const AA_TRIALS = 2000;

/**
 * One A/A cell: 2,000 simulated experiments at the shipped defaults in which nothing differs;
 * at most 6 % of them may call any condition faster or slower.
 */
export function expectFewFalseVerdicts(driftSd: number, requestsPerWindow: number): void {
  let falseExperiments = 0;
  let decided = 0;
  for (let trial = 0; trial < AA_TRIALS; trial++) {
    const rows = simulateExperiment(
      { windows: EXPERIMENT_DEFAULTS.repeats, requestsPerWindow, driftSd, requestCv: 0.2, candidates: 2, shift: 1 },
      1 + trial + requestsPerWindow * 1e5 + driftSd * 1e7,
    );
    if (rows.some((row) => row.verdict === 'faster' || row.verdict === 'slower')) falseExperiments += 1;
    decided += rows.filter((row) => row.verdict !== 'insufficient data').length;
  }
  const rate = falseExperiments / AA_TRIALS;
  console.log(
    `A/A drift ${driftSd}, ${requestsPerWindow}/window: ${(rate * 100).toFixed(2)} % of ${AA_TRIALS} experiments with a false verdict`,
  );
  expect(rate).toBeLessThanOrEqual(0.06);
  // The test must have decided something: a procedure that always abstains would pass trivially.
  expect(decided).toBeGreaterThan(AA_TRIALS * 2);
}
