import { describe, expect, it } from 'vitest';
import { EXPERIMENT_DEFAULTS } from '../../src/shared/experiment-defaults';
import { AA_DRIFTS, expectFewFalseVerdicts, simulateExperiment } from './verdict-simulation.helpers';

/**
 * Error rates of the experiment verdicts, measured by simulation at the shipped defaults
 * (windows per condition, requests per window, Holm correction at 95 %, two candidates
 * against a baseline, TTFT and TPOT at p50 and p95: eight verdicts per experiment).
 * The A/A cells with 32 requests per window are in verdict-long-windows-simulation.test.ts,
 * so that the two halves run on two cores.
 */
const TRIALS = 2000;
const isDirectional = (verdict: string) => verdict === 'faster' || verdict === 'slower';

describe('verdicts: false-verdict rate when nothing differs (A/A), 8 requests per window', () => {
  it.each(AA_DRIFTS)(
    'window drift sd %s: at most 6 % of experiments call anything faster or slower',
    (driftSd) => expectFewFalseVerdicts(driftSd, 8),
    120_000,
  );
});

describe('the simulation itself', () => {
  it('catches a procedure that is too eager: at 70 % confidence the same A/A experiments exceed the bound', () => {
    let falseExperiments = 0;
    for (let trial = 0; trial < 500; trial++) {
      const rows = simulateExperiment(
        { windows: EXPERIMENT_DEFAULTS.repeats, requestsPerWindow: 32, driftSd: 0.05, requestCv: 0.2, candidates: 2, shift: 1 },
        7_000_000 + trial,
        { confidence: 0.7, equivalenceMargin: 0.05, minWindowsPerSide: 3, minRequestsPerSide: 8 },
      );
      if (rows.some((row) => isDirectional(row.verdict))) falseExperiments += 1;
    }
    expect(falseExperiments / 500).toBeGreaterThan(0.06);
  }, 120_000);
});

describe('verdicts: power when something differs (A/B)', () => {
  it('finds a 15 % TTFT shift (drift sd 3 %, request CV 20 %) in at least 80 % of experiments at the defaults', () => {
    let found = 0;
    let wrongWay = 0;
    for (let trial = 0; trial < TRIALS; trial++) {
      const rows = simulateExperiment(
        {
          windows: EXPERIMENT_DEFAULTS.repeats,
          requestsPerWindow: EXPERIMENT_DEFAULTS.requestsPerWindow,
          driftSd: 0.03,
          requestCv: 0.2,
          candidates: 2,
          shift: 1.15,
        },
        900_000 + trial,
      );
      const verdict = rows.find((row) => row.metric === 'ttft_ms p50' && row.b === 'c0')!.verdict;
      if (verdict === 'slower') found += 1;
      if (verdict === 'faster') wrongWay += 1;
    }
    console.log(`A/B 15 % shift: detected in ${((found / TRIALS) * 100).toFixed(1)} % of ${TRIALS} experiments`);
    expect(found / TRIALS).toBeGreaterThanOrEqual(0.8);
    expect(wrongWay).toBe(0);
  }, 120_000);

  it('calls identical conditions with little noise equivalent within ±5 %, and a 15 % shift never equivalent', () => {
    let equivalent = 0;
    let shiftedEquivalent = 0;
    for (let trial = 0; trial < 300; trial++) {
      const same = simulateExperiment(
        { windows: EXPERIMENT_DEFAULTS.repeats, requestsPerWindow: 32, driftSd: 0.005, requestCv: 0.05, candidates: 1, shift: 1 },
        5_000_000 + trial,
      );
      if (same.find((row) => row.metric === 'ttft_ms p50')!.verdict === 'equivalent') equivalent += 1;
      const shifted = simulateExperiment(
        { windows: EXPERIMENT_DEFAULTS.repeats, requestsPerWindow: 32, driftSd: 0.005, requestCv: 0.05, candidates: 1, shift: 1.15 },
        6_000_000 + trial,
      );
      if (shifted.find((row) => row.metric === 'ttft_ms p50')!.verdict === 'equivalent') shiftedEquivalent += 1;
    }
    expect(equivalent / 300).toBeGreaterThan(0.9);
    expect(shiftedEquivalent).toBe(0);
  }, 120_000);
});
