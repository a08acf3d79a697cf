import { describe, expect, it } from 'vitest';
import { parseKldOutput } from '../../src/main/experiments/kld';
import { windowSchedule } from '../../src/main/experiments/windows';
import { bootstrapDifference } from '../../src/main/metrics/compare';
import { seededRandom } from '../../src/main/core/random';

const sample = (seed: number, n: number, shift = 0) => {
  const random = seededRandom(seed);
  return Array.from({ length: n }, () => 100 + shift + (random() - 0.5) * 20);
};

describe('request-noise intervals between two single runs', () => {
  it('covers zero for two samples of the same condition', () => {
    const result = bootstrapDifference(sample(1, 200), sample(2, 200), 'p50');
    expect(result.ci![0]).toBeLessThan(0);
    expect(result.ci![1]).toBeGreaterThan(0);
  });

  it('locates a clear shift, but never turns one window per side into a faster/slower verdict', () => {
    const faster = bootstrapDifference(sample(1, 200), sample(2, 200, -15), 'p50');
    expect(faster.ci![1]).toBeLessThan(0);
    expect(faster.verdict).toBe('insufficient data');
    expect(faster.note).toMatch(/^request noise only/);
    const slower = bootstrapDifference(sample(1, 200), sample(2, 200, 15), 'p95');
    expect(slower.ci![0]).toBeGreaterThan(0);
    expect(slower.verdict).toBe('insufficient data');
  });

  it('says when there is too little data', () => {
    const result = bootstrapDifference([1], [2, 3], 'p50');
    expect(result.ci).toBeNull();
    expect(result.verdict).toBe('insufficient data');
  });

  it('uses order-statistic intervals for large samples that agree with the bootstrap', () => {
    const same = bootstrapDifference(sample(3, 5000), sample(4, 5000), 'p95');
    expect(same.ci![0]).toBeLessThan(0);
    expect(same.ci![1]).toBeGreaterThan(0);
    expect(bootstrapDifference(sample(3, 5000), sample(4, 5000, 2), 'p50').ci![0]).toBeGreaterThan(0);
    expect(bootstrapDifference(sample(3, 1500), sample(4, 1500, 2), 'p50').ci![0]).toBeGreaterThan(0);
  });
});

describe('experiment helpers', () => {
  it('rotates the order of conditions from window to window', () => {
    expect(windowSchedule(['A', 'B', 'C'], 2).map((entry) => `${entry.window}${entry.condition}`)).toEqual([
      '0A',
      '0B',
      '0C',
      '1B',
      '1C',
      '1A',
    ]);
  });

  it('reads llama-perplexity KLD output', () => {
    expect(parseKldOutput('Mean    KLD:   0.005834 ±   0.000030\nSame top p: 71.284 ± 1.720 %\n')).toMatchObject({
      kldMean: 0.005834,
      sameTopP: 0.71284,
    });
    expect(parseKldOutput('nothing')).toMatchObject({ kldMean: null, sameTopP: null });
  });
});
