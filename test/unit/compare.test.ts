import { describe, expect, it } from 'vitest';
import { greedyAgreement } from '../../src/main/experiments/agreement';
import { parseKldOutput } from '../../src/main/experiments/kld';
import { windowSchedule } from '../../src/main/experiments/windows';
import { bootstrapDifference } from '../../src/main/metrics/compare';
import { seededRandom } from '../../src/main/models/random';
import type { RequestRow } from '../../src/main/store/run-store';

const sample = (seed: number, n: number, shift = 0) => {
  const random = seededRandom(seed);
  return Array.from({ length: n }, () => 100 + shift + (random() - 0.5) * 20);
};

describe('bootstrap verdicts', () => {
  it('finds no significant difference between two samples of the same condition', () => {
    const result = bootstrapDifference(sample(1, 200), sample(2, 200), 'p50');
    expect(result.verdict).toBe('no significant difference');
    expect(result.ci![0]).toBeLessThan(0);
    expect(result.ci![1]).toBeGreaterThan(0);
  });

  it('calls a clear shift faster or slower, and respects the direction of "better"', () => {
    expect(bootstrapDifference(sample(1, 200), sample(2, 200, -15), 'p50').verdict).toBe('faster');
    expect(bootstrapDifference(sample(1, 200), sample(2, 200, 15), 'p95').verdict).toBe('slower');
    expect(bootstrapDifference(sample(1, 200), sample(2, 200, 15), 'mean', { lowerIsBetter: false }).verdict).toBe('faster');
  });

  it('says when there is too little data', () => {
    expect(bootstrapDifference([1], [2, 3], 'p50').verdict).toBe('insufficient data');
  });
});

describe('experiment helpers', () => {
  it('rotates the order of conditions from window to window', () => {
    expect(windowSchedule(['A', 'B', 'C'], 2).map((entry) => `${entry.window}${entry.condition}`)).toEqual(['0A', '0B', '0C', '1B', '1C', '1A']);
  });

  it('reads llama-perplexity KLD output', () => {
    expect(parseKldOutput('Mean    KLD:   0.005834 ±   0.000030\nSame top p: 71.284 ± 1.720 %\n')).toEqual({ kldMean: 0.005834, sameTopP: 0.71284 });
    expect(parseKldOutput('nothing')).toEqual({ kldMean: null, sameTopP: null });
  });

  it('measures greedy agreement by item and occurrence, with the first divergence', () => {
    const row = (item: string, output: string): RequestRow => ({ item_id: item, output_text: output, warmup: 0, error_class: null } as RequestRow);
    const result = greedyAgreement([row('a', 'hello world'), row('b', 'same'), row('a', 'again')], [row('a', 'hello there'), row('b', 'same'), row('c', 'unpaired')]);
    expect(result).toEqual({ agreement: 0.5, firstDivergenceMean: 6, pairs: 2 });
  });
});

describe('large samples', () => {
  it('use order-statistic intervals that agree with the bootstrap on verdicts', () => {
    const same = bootstrapDifference(sample(3, 5000), sample(4, 5000), 'p95');
    expect(same.verdict).toBe('no significant difference');
    expect(bootstrapDifference(sample(3, 5000), sample(4, 5000, 2), 'p50').verdict).toBe('slower');
    const small = bootstrapDifference(sample(3, 1500), sample(4, 1500, 2), 'p50');
    expect(small.verdict).toBe('slower');
  });
});

describe('Pareto set', () => {
  it('keeps the points no other point beats on both throughput and p95 TTFT', async () => {
    const { paretoSet } = await import('../../src/main/experiments/sweep');
    const set = paretoSet([
      { name: 'a', throughput: 100, ttftP95: 50 },
      { name: 'b', throughput: 200, ttftP95: 80 },
      { name: 'c', throughput: 150, ttftP95: 90 },
      { name: 'd', throughput: null, ttftP95: 10 },
    ]);
    expect([...set].sort()).toEqual(['a', 'b']);
  });
});

describe('windowed bootstrap', () => {
  it('widens the interval by the drift between windows, so two drifting windows of one condition are not called different', async () => {
    const { windowedBootstrapDifference } = await import('../../src/main/metrics/compare');
    // Same condition, windows drifting by ±4 ms: a pooled request bootstrap would call this a difference.
    const a = [sample(1, 100, -4), sample(2, 100, 4)];
    const b = [sample(3, 100, 4), sample(4, 100, -4)];
    expect(windowedBootstrapDifference(a, b, 'p50').verdict).toBe('no significant difference');
    // A shift far beyond the drift is still found.
    expect(windowedBootstrapDifference(a, [sample(5, 100, -30), sample(6, 100, -25)], 'p50').verdict).toBe('faster');
  });
});
