import { describe, expect, it } from 'vitest';
import { searchCapacity, type CapacitySearchSettings, type StepSample } from '../../src/main/experiments/kinds/capacity/search';
import { binomialCdf, decideQuantile, minimumRequestsToMeet } from '../../src/main/metrics/quantile-slo';
import { seededRandom } from '../../src/main/core/random';

/** Requests above the limit among n, each independently with probability `exceedance`. */
function violations(random: () => number, n: number, exceedance: number): number {
  let count = 0;
  for (let i = 0; i < n; i++) if (random() < exceedance) count += 1;
  return count;
}

describe('the per-load percentile decision', () => {
  it('computes binomial tails exactly', () => {
    // P(K ≤ 1 | 10, 0.1) = 0.9^10 + 10 · 0.1 · 0.9^9
    expect(binomialCdf(1, 10, 0.1)).toBeCloseTo(0.9 ** 10 + 10 * 0.1 * 0.9 ** 9, 12);
    expect(binomialCdf(0, 50, 0.01)).toBeCloseTo(0.99 ** 50, 12);
    expect(binomialCdf(-1, 5, 0.5)).toBe(0);
    expect(binomialCdf(5, 5, 0.5)).toBe(1);
  });

  it('needs the stated number of requests before a load can be shown to meet at all', () => {
    const n = minimumRequestsToMeet(90, 0.05);
    expect(n).toBe(29);
    expect(decideQuantile(0, n, 90, 0.05, 0.05)).toBe('meets');
    expect(decideQuantile(0, n - 1, 90, 0.05, 0.05)).toBe('inconclusive');
    expect(minimumRequestsToMeet(99, 0.05)).toBe(299);
  });

  it.each([
    [90, 200],
    [99, 2000],
  ])('at p%i with %i requests: false "meets" and false "misses" at most α at the boundary, and power away from it', (percentile, n) => {
    const random = seededRandom(20261130 + percentile);
    const q = 1 - percentile / 100;
    const alpha = 0.05;
    const trials = 3000;
    const rate = (exceedance: number, outcome: string) => {
      let hits = 0;
      for (let i = 0; i < trials; i++)
        if (decideQuantile(violations(random, n, exceedance), n, percentile, alpha, alpha) === outcome) hits += 1;
      return hits / trials;
    };
    // At the boundary the SLO is exactly met and exactly missed: neither claim may be made more than α of the time.
    const falseMeets = rate(q, 'meets');
    const falseMisses = rate(q, 'misses');
    expect(falseMeets).toBeLessThanOrEqual(alpha + 0.01);
    expect(falseMisses).toBeLessThanOrEqual(alpha + 0.01);
    // Twice the allowed exceedance is caught, and a third of it is shown to meet, most of the time.
    const missPower = rate(2 * q, 'misses');
    const meetPower = rate(q / 3, 'meets');
    console.log(
      `[p${percentile}, n=${n}] false meets ${falseMeets.toFixed(3)}, false misses ${falseMisses.toFixed(3)}, power: misses at 2q ${missPower.toFixed(3)}, meets at q/3 ${meetPower.toFixed(3)}`,
    );
    expect(missPower).toBeGreaterThan(0.9);
    expect(meetPower).toBeGreaterThan(0.8);
  });
});

describe('the capacity search', () => {
  const settings: CapacitySearchSettings = {
    by: 'rate',
    percentile: 90,
    metrics: ['ttft_ms', 'tpot_ms'],
    start: 1,
    minLoad: 0.05,
    maxLoad: 1000,
    growth: 2,
    relativeTolerance: 0.1,
    maxSteps: 12,
    maxLooks: 2,
    alpha: 0.05,
    invalidRetries: 2,
  };

  /** A server whose TTFT exceedance grows with load and crosses q exactly at `capacity`; TPOT never binds. */
  function simulatedServer(capacity: number, seed: number, perLook = 150) {
    const random = seededRandom(seed);
    const q = 1 - settings.percentile / 100;
    return async (load: number, _look?: number): Promise<StepSample> => {
      const exceedance = Math.min(1, q * Math.exp((load - capacity) / (0.15 * capacity)));
      return {
        n: perLook,
        violations: { ttft_ms: violations(random, perLook, exceedance), tpot_ms: violations(random, perLook, exceedance / 10) },
        clientBound: false,
      };
    };
  }

  /** Searches for seeded servers of known capacity: how often [capacity, lowestMiss) covers the truth, and the claims above it. */
  async function coverage(searchSettings: CapacitySearchSettings, searches: number) {
    let covered = 0;
    let overclaimed = 0;
    const widths: number[] = [];
    for (let seed = 0; seed < searches; seed++) {
      const truth = 3 + (seed % 7) * 1.7;
      const outcome = await searchCapacity(searchSettings, simulatedServer(truth, 1000 + seed));
      if (outcome.capacity !== null && outcome.capacity > truth) overclaimed += 1;
      const high = outcome.lowestMiss ?? Infinity;
      if (outcome.capacity !== null && outcome.capacity <= truth && truth < high) covered += 1;
      if (outcome.capacity !== null && outcome.lowestMiss !== null) widths.push((outcome.lowestMiss - outcome.capacity) / truth);
    }
    widths.sort((a, b) => a - b);
    return { covered: covered / searches, overclaimed: overclaimed / searches, medianWidth: widths[Math.floor(widths.length / 2)]! };
  }

  it('reports an interval that covers the true capacity at least 1 − α of the time, and is narrow', async () => {
    const { covered, overclaimed, medianWidth } = await coverage(settings, 400);
    console.log(
      `[capacity search] coverage ${covered.toFixed(3)}, over-claimed ${overclaimed.toFixed(3)}, median width ${(medianWidth * 100).toFixed(0)} % of capacity`,
    );
    expect(covered).toBeGreaterThanOrEqual(0.95);
    expect(overclaimed).toBeLessThanOrEqual(0.05);
    expect(medianWidth).toBeLessThan(0.6);
  });

  /**
   * The least favourable server for the decisions: up to `capacity` every load sits exactly on the
   * SLO (a tenth of requests over the limit at p90), so each look below it may be called a miss
   * by chance, and above it the exceedance grows as in `simulatedServer`.
   */
  function boundaryServer(capacity: number, seed: number, perLook = 150) {
    const random = seededRandom(seed);
    const q = 1 - settings.percentile / 100;
    return async (load: number): Promise<StepSample> => {
      const exceedance = load <= capacity ? q : Math.min(1, q * Math.exp((load - capacity) / (0.15 * capacity)));
      return { n: perLook, violations: { ttft_ms: violations(random, perLook, exceedance), tpot_ms: 0 }, clientBound: false };
    };
  }

  /** How often a search claims something false: a miss at a load that meets, or a capacity above the true one. */
  async function wrongClaimRate(searchSettings: CapacitySearchSettings, searches: number): Promise<number> {
    let wrong = 0;
    for (let seed = 0; seed < searches; seed++) {
      const truth = 3 + (seed % 7) * 1.7;
      const outcome = await searchCapacity(searchSettings, boundaryServer(truth, 3000 + seed));
      if ((outcome.capacity !== null && outcome.capacity > truth) || (outcome.lowestMiss !== null && outcome.lowestMiss <= truth))
        wrong += 1;
    }
    return wrong / searches;
  }

  it('makes a false claim at most α of the time on a server that sits on the SLO up to its capacity; deciding each look at α does not', async () => {
    const split = await wrongClaimRate(settings, 400);
    // The mistake the split prevents: every look decided at the full α, as if it were the only one.
    const perLook = await wrongClaimRate({ ...settings, alpha: settings.alpha * settings.maxSteps * settings.maxLooks }, 400);
    console.log(
      `[capacity search on the SLO boundary] false claims: α split over looks ${split.toFixed(3)}, every look at α ${perLook.toFixed(3)}`,
    );
    expect(split).toBeLessThanOrEqual(settings.alpha);
    expect(perLook).toBeGreaterThan(settings.alpha);
  });

  it('finds a higher capacity for a looser SLO (a server that crosses later)', async () => {
    const tight = await searchCapacity(settings, simulatedServer(4, 7));
    const loose = await searchCapacity(settings, simulatedServer(12, 7));
    expect(loose.capacity!).toBeGreaterThan(tight.capacity!);
  });

  it('takes a client-bound sample again and never counts it as an SLO miss', async () => {
    const server = simulatedServer(8, 11);
    let boundOnce = true;
    const outcome = await searchCapacity(settings, async (load, look) => {
      // The first look at 4 req/s: the generator fell behind (and its latencies would look terrible).
      if (load === 4 && boundOnce) {
        boundOnce = false;
        return { n: 150, violations: { ttft_ms: 150, tpot_ms: 150 }, clientBound: true };
      }
      return server(load, look);
    });
    const four = outcome.steps.find((step) => step.load === 4)!;
    expect(four.invalidSamples).toBe(1);
    expect(four.decision).toBe('meets');
  });

  /**
   * Searches in which a third of the samples ran beside another process (every request over the
   * limit); `flagged` says whether they reach the search marked contaminated, as the run marks them.
   */
  async function searchesUnderContention(flagged: boolean, searches: number) {
    let covered = 0;
    let underclaimedByContention = 0;
    for (let seed = 0; seed < searches; seed++) {
      const truth = 3 + (seed % 7) * 1.7;
      const clean = await searchCapacity(settings, simulatedServer(truth, 5000 + seed));
      const random = seededRandom(9000 + seed);
      const server = simulatedServer(truth, 5000 + seed);
      let contaminated = 0;
      const outcome = await searchCapacity(settings, async (load, look) => {
        if (random() < 1 / 3) {
          contaminated += 1;
          return { n: 150, violations: { ttft_ms: 150, tpot_ms: 150 }, clientBound: false, contaminated: flagged };
        }
        return server(load, look);
      });
      if (flagged) expect(outcome.steps.reduce((sum, step) => sum + step.contaminatedSamples, 0)).toBe(contaminated);
      for (const step of outcome.steps) if (step.decision === 'misses') expect(step.n).toBeGreaterThan(0);
      const high = outcome.lowestMiss ?? Infinity;
      if (outcome.capacity !== null && outcome.capacity <= truth && truth < high) covered += 1;
      if (clean.capacity !== null && (outcome.capacity ?? 0) < clean.capacity / 2) underclaimedByContention += 1;
    }
    return { covered: covered / searches, underclaimed: underclaimedByContention / searches };
  }

  it('sets contaminated samples aside like client-bound ones: a compile beside the server does not lower the capacity', async () => {
    const searches = 200;
    const { covered, underclaimed } = await searchesUnderContention(true, searches);
    console.log(
      `[capacity search] a third of samples contaminated: coverage ${covered.toFixed(3)}, capacity under half the clean search's in ${Math.round(underclaimed * searches)} of ${searches}`,
    );
    expect(covered).toBeGreaterThanOrEqual(0.95);
    // A load contaminated three times in a row is unmeasurable and the search stays below it: precision lost, never correctness.
    expect(underclaimed).toBeLessThanOrEqual(0.15);
  });

  it('measures the coverage collapse of a search that counts contaminated samples as measurements: the simulation can tell', async () => {
    const { covered, underclaimed } = await searchesUnderContention(false, 200);
    console.log(
      `[capacity search, contaminated samples counted] coverage ${covered.toFixed(3)}, capacity under half in ${(underclaimed * 100).toFixed(0)} %`,
    );
    // Each contaminated look is a batch of misses: loads are called misses far below the truth.
    expect(covered).toBeLessThan(0.5);
  });

  it('sets a load aside as unmeasurable when the client stays behind, and stays below it', async () => {
    const server = simulatedServer(100, 13);
    const outcome = await searchCapacity(settings, async (load, look) =>
      load >= 16 ? { n: 150, violations: { ttft_ms: 0, tpot_ms: 0 }, clientBound: true } : server(load, look),
    );
    expect(outcome.steps.find((step) => step.load === 16)?.decision).toBe('invalid');
    expect(outcome.capacity).toBeLessThan(16);
    expect(outcome.lowestMiss).toBeNull();
  });

  it('says so when even the lowest load misses', async () => {
    const outcome = await searchCapacity({ ...settings, start: 0.2 }, simulatedServer(0.01, 17));
    expect(outcome.capacity).toBeNull();
    expect(outcome.stopped).toMatch(/even the lowest load tried .* was not shown to meet/);
  });

  it('bisects whole numbers for concurrency', async () => {
    const outcome = await searchCapacity({ ...settings, by: 'concurrency', maxLoad: 256 }, simulatedServer(11, 19));
    expect(outcome.steps.every((step) => Number.isInteger(step.load))).toBe(true);
    expect(outcome.capacity).toBeGreaterThanOrEqual(6);
    expect(outcome.capacity).toBeLessThanOrEqual(11);
  });
});
