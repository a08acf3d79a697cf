import { decideVerdicts, type VerdictQuestion, type VerdictSettings } from '../../src/main/metrics/window-verdicts';
import { seededRandom } from '../../src/main/models/random';

/**
 * A simulated experiment: a baseline and `candidates` other conditions, each run in
 * `windows` windows of `requestsPerWindow` requests. Every (condition, window) run gets its
 * own multiplicative drift (normal, sd `driftSd` of the mean) — the worst case, since drift
 * shared by neighbouring runs would cancel in the comparison — and every request its own
 * log-normal noise with coefficient of variation `requestCv`. `shift` multiplies the first
 * candidate's TTFT only.
 */
export interface SimulatedDesign {
  windows: number;
  requestsPerWindow: number;
  driftSd: number;
  requestCv: number;
  candidates: number;
  shift: number;
}

function normal(random: () => number): number {
  // Box–Muller: one value per call is enough here.
  const u = Math.max(random(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}

export function simulateExperiment(design: SimulatedDesign, seed: number, settings?: VerdictSettings) {
  const random = seededRandom(seed);
  const sigma = Math.sqrt(Math.log(1 + design.requestCv ** 2));
  const window = (mean: number) => {
    const drift = Math.max(0.05, 1 + design.driftSd * normal(random));
    return Array.from({ length: design.requestsPerWindow }, () => mean * drift * Math.exp(sigma * normal(random) - sigma ** 2 / 2));
  };
  const condition = (ttftMean: number) => ({
    ttft: Array.from({ length: design.windows }, () => window(ttftMean)),
    tpot: Array.from({ length: design.windows }, () => window(10)),
  });
  const baseline = condition(100);
  const others = Array.from({ length: design.candidates }, (_, i) => condition(i === 0 ? 100 * design.shift : 100));
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
  return decideVerdicts(questions, settings);
}
