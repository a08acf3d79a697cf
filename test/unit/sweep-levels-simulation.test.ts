import { describe, expect, it } from 'vitest';
import type { VerdictRow } from '../../src/shared/contract/experiments';
import { EXPERIMENT_DEFAULTS } from '../../src/shared/experiment-defaults';
import { sequentialLooks } from '../../src/shared/experiment-design';
import { decideLook, everyVerdictSettled } from '../../src/main/metrics/sequential-verdicts';
import { decideVerdicts, DEFAULT_VERDICT_SETTINGS, settingsPerFamily, type VerdictSettings } from '../../src/main/metrics/window-verdicts';
import { firstWindows, simulatedQuestions, type SimulatedDesign } from './verdict-simulation.helpers';

/**
 * Error rates of the sweep's verdicts (sweep/protocol.ts): one Holm family per load level, each at its
 * share of the error budget (settingsPerFamily), looked at after 3 and 6 windows and stopped once every
 * level's verdicts are settled. The levels are simulated independent of each other, the case in which an
 * even split is tightest (the sweep's levels share servers, which only makes their errors agree more).
 */
const LOOKS = sequentialLooks(EXPERIMENT_DEFAULTS.repeats, EXPERIMENT_DEFAULTS.minWindowsPerSide);
const LEVELS = 3;
const TRIALS = 2000;
const isDirectional = (row: VerdictRow) => row.verdict === 'faster' || row.verdict === 'slower';
const percent = (share: number) => `${(share * 100).toFixed(1)} %`;
const level = (overrides: Partial<SimulatedDesign> = {}): SimulatedDesign => ({
  windows: EXPERIMENT_DEFAULTS.repeats,
  requestsPerWindow: 8,
  driftSd: 0.05,
  requestCv: 0.2,
  candidates: 1,
  shift: 1,
  ...overrides,
});

/** One simulated sweep: every level's family decided at each look, the sweep stopped when all are settled. */
function simulateSweep(levels: SimulatedDesign[], seed: number, perLevel: VerdictSettings): { rows: VerdictRow[][]; windows: number } {
  const questions = levels.map((design, index) => simulatedQuestions(design, seed * 16 + index));
  const settings = { ...perLevel, sequential: { looks: LOOKS } };
  for (const windows of LOOKS) {
    const rows = questions.map((family) => decideLook(firstWindows(family, windows), settings));
    if (windows === LOOKS.at(-1) || rows.every(everyVerdictSettled)) return { rows, windows };
  }
  throw new Error('no looks');
}

/** The share of sweeps with any false difference at any level. */
function falseSweeps(perLevel: VerdictSettings, seedBase: number) {
  let falseCount = 0;
  for (let trial = 0; trial < TRIALS; trial++) {
    const sweep = simulateSweep(
      Array.from({ length: LEVELS }, () => level()),
      seedBase + trial,
      perLevel,
    );
    if (sweep.rows.some((rows) => rows.some(isDirectional))) falseCount += 1;
  }
  return { rate: falseCount / TRIALS };
}

describe('the sweep: false verdicts over every load level and both looks (A/A at each level)', () => {
  const split = settingsPerFamily(DEFAULT_VERDICT_SETTINGS, LEVELS);
  let splitRate: number | null = null;
  const splitSweeps = () => (splitRate ??= falseSweeps(split, 70_000_000).rate);

  it('splits the budget evenly: three levels at 98.33 % each, one level at the nominal 95 %', () => {
    expect(split.confidence).toBeCloseTo(1 - 0.05 / 3, 12);
    expect(settingsPerFamily(DEFAULT_VERDICT_SETTINGS, 1).confidence).toBe(DEFAULT_VERDICT_SETTINGS.confidence);
    expect(settingsPerFamily(DEFAULT_VERDICT_SETTINGS, 0).confidence).toBe(DEFAULT_VERDICT_SETTINGS.confidence);
  });

  it('keeps the family-wise false-verdict rate at most 5 % (plus simulation error) with the split', () => {
    const rate = splitSweeps();
    console.log(`sweep A/A, ${LEVELS} levels, split: ${percent(rate)} of ${TRIALS} sweeps with a false verdict`);
    // 2,000 trials resolve a 5 % rate to ±1 point (two standard errors).
    expect(rate).toBeLessThanOrEqual(0.06);
  }, 120_000);

  it('catches the budget spent in full at every level: the same sweeps then exceed the bound', () => {
    const naive = falseSweeps(DEFAULT_VERDICT_SETTINGS, 70_000_000);
    console.log(`sweep A/A, ${LEVELS} levels, each at the full 5 %: ${percent(naive.rate)} false (split: ${percent(splitSweeps())})`);
    expect(naive.rate).toBeGreaterThan(0.08);
    expect(naive.rate).toBeGreaterThan(splitSweeps() * 1.8);
  }, 120_000);
});

describe('the sweep: power and windows used when settings differ', () => {
  const split = settingsPerFamily(DEFAULT_VERDICT_SETTINGS, LEVELS);
  const TRIALS_AB = 300;

  it('finds a 1.15× TTFT shift at one of three levels about as often as the fixed design at its maximum, never the wrong way', () => {
    let sequentialFound = 0;
    let fixedFound = 0;
    let wrongWay = 0;
    for (let trial = 0; trial < TRIALS_AB; trial++) {
      const levels = [level({ shift: 1.15, requestsPerWindow: 32, driftSd: 0.03 }), level(), level()];
      const seed = 80_000_000 + trial;
      const verdict = simulateSweep(levels, seed, split).rows[0]!.find((row) => row.metric === 'ttft_ms p50')!.verdict;
      if (verdict === 'slower') sequentialFound += 1;
      if (verdict === 'faster') wrongWay += 1;
      const fixed = decideVerdicts(simulatedQuestions(levels[0]!, seed * 16), split);
      if (fixed.find((row) => row.metric === 'ttft_ms p50')!.verdict === 'slower') fixedFound += 1;
    }
    console.log(
      `sweep A/B 1.15× at one level: sequential finds it in ${percent(sequentialFound / TRIALS_AB)}, the fixed design in ${percent(fixedFound / TRIALS_AB)}`,
    );
    expect(sequentialFound / TRIALS_AB).toBeGreaterThanOrEqual(fixedFound / TRIALS_AB - 0.02);
    expect(wrongWay).toBe(0);
  }, 120_000);

  it('stops at the first look when the setting is 5× slower in every metric at every level, and only then', () => {
    let windows = 0;
    let right = 0;
    for (let trial = 0; trial < TRIALS_AB; trial++) {
      const levels = Array.from({ length: LEVELS }, () => level({ shift: 5, tpotShift: 5, requestsPerWindow: 32, driftSd: 0.03 }));
      const sweep = simulateSweep(levels, 90_000_000 + trial, split);
      windows += sweep.windows;
      if (sweep.rows.every((rows) => rows.filter((row) => row.metric.startsWith('ttft_ms')).every((row) => row.verdict === 'slower')))
        right += 1;
    }
    // One metric or level left open keeps the sweep going (at three windows a side no equivalence is decided: it needs the last look).
    const oneOpen = simulateSweep([level({ shift: 5, tpotShift: 5, requestsPerWindow: 32 }), level(), level()], 91_000_000, split);
    const tpotOpen = simulateSweep(
      Array.from({ length: LEVELS }, () => level({ shift: 5, requestsPerWindow: 32 })),
      92_000_000,
      split,
    );
    console.log(`sweep A/B 5× in every metric at every level: ${(windows / TRIALS_AB).toFixed(2)} of ${LOOKS.at(-1)} windows on average`);
    expect(windows / TRIALS_AB).toBeLessThanOrEqual(3.3);
    expect(right).toBe(TRIALS_AB);
    expect(oneOpen.windows).toBe(LOOKS.at(-1));
    expect(tpotOpen.windows).toBe(LOOKS.at(-1));
  }, 120_000);
});
