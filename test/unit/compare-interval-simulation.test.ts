import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/main/core/random';
import { BOOTSTRAP_MAX_SAMPLES } from '../../src/shared/contract/compare';
import { BootstrapSample, differenceOfSamples, type Statistic } from '../../src/main/metrics/compare';

/**
 * Coverage of Compare's request-noise interval (the difference B − A of a latency statistic between
 * two runs), measured on seeded samples of two runs drawn from one latency distribution, so that the
 * true difference is zero: how often the 95 % interval holds zero, for the bootstrap (small runs)
 * and the order-statistic interval (runs over BOOTSTRAP_MAX_SAMPLES). Constructed latencies of two
 * shapes real TTFTs take: a long right tail (lognormal), and two modes (70 % of prompts found in
 * the cache around 20 ms, the rest prefilled around 120 ms).
 */
const TRIALS = 300;

/** A standard normal from two uniforms (Box–Muller). */
const normal = (random: () => number) => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
const POPULATIONS = {
  'long tail': (random: () => number) => Math.exp(Math.log(40) + 0.5 * normal(random)),
  'two modes': (random: () => number) => (random() < 0.7 ? 20 + 2 * normal(random) : 120 + 20 * normal(random)),
};
type Population = keyof typeof POPULATIONS;

function latencies(random: () => number, n: number, population: Population): Float64Array {
  return Float64Array.from({ length: n }, () => POPULATIONS[population](random)).sort();
}

/** Share of trials whose interval holds the true difference of zero; `sameSeed` resamples both sides at the same indices. */
function coverage(
  statistic: Statistic,
  n: number,
  seed: number,
  options: { sameSeed?: boolean; shift?: number; population?: Population } = {},
): number {
  const random = seededRandom(seed);
  const population = options.population ?? 'long tail';
  let held = 0;
  for (let trial = 0; trial < TRIALS; trial++) {
    const a = latencies(random, n, population);
    const b = latencies(random, n, population).map((value) => value * (1 + (options.shift ?? 0)));
    const sideA = new BootstrapSample(a, { seed: trial * 2 + 1 });
    const sideB = new BootstrapSample(b, { seed: options.sameSeed ? trial * 2 + 1 : trial * 2 + 2 });
    const { ci } = differenceOfSamples(sideA, sideB, statistic);
    if (ci![0] <= 0 && 0 <= ci![1]) held += 1;
  }
  return held / TRIALS;
}

describe("Compare's request-noise interval: coverage", () => {
  it.each(['p50', 'p95', 'mean'] as const)(
    'the bootstrap holds a zero difference in about 95 of 100 trials: %s, 150 requests a run',
    (statistic) => {
      const rate = coverage(statistic, 150, 11);
      console.log(`[interval coverage] bootstrap ${statistic}, n=150: ${(rate * 100).toFixed(1)} %`);
      // Three binomial standard errors around 95 % at 300 trials, and a little more below: a percentile bootstrap runs short at the tail.
      expect(rate).toBeGreaterThanOrEqual(0.89);
      expect(rate).toBeLessThanOrEqual(0.99);
    },
  );

  it.each(
    (['long tail', 'two modes'] as const).flatMap((population) =>
      (['p50', 'p95', 'mean'] as const).map((statistic): [Statistic, Population] => [statistic, population]),
    ),
  )('the order-statistic interval does the same just above the bootstrap size: %s, %s', (statistic, population) => {
    const n = BOOTSTRAP_MAX_SAMPLES + 1;
    const rate = coverage(statistic, n, 12, { population });
    console.log(`[interval coverage] order statistics ${statistic}, ${population}, n=${n}: ${(rate * 100).toFixed(1)} %`);
    expect(rate).toBeGreaterThanOrEqual(0.9);
    expect(rate).toBeLessThanOrEqual(0.99);
  });

  it('excludes zero where one run is 30 % slower', () => {
    const rate = coverage('p50', 150, 13, { shift: 0.3 });
    console.log(`[interval coverage] bootstrap p50, n=150, B 30 % slower: zero held in ${(rate * 100).toFixed(1)} %`);
    expect(rate).toBeLessThan(0.1);
  });

  it('catches a wrong procedure: both runs resampled at the same indices give intervals too narrow', () => {
    const rate = coverage('p50', 150, 11, { sameSeed: true });
    console.log(`[interval coverage] bootstrap p50, n=150, one seed for both runs (wrong): ${(rate * 100).toFixed(1)} %`);
    expect(rate).toBeLessThan(0.85);
  });
});
