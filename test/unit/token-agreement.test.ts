import { describe, expect, it } from 'vitest';
import { firstDivergence, tokenAgreement } from '../../src/main/experiments/agreement';

const items = (entries: Record<string, number[]>) => new Map(Object.entries(entries));

describe('greedy token agreement', () => {
  it('is 1 with every item an exact match when the sequences are identical', () => {
    const same = items({ a: [1, 2, 3, 2], b: [7, 8] });
    expect(tokenAgreement(same, same)).toEqual({ mean: 1, exact_match_rate: 1, first_divergence_index_mean: null, items: 2, error: null });
  });

  it('counts the share of the baseline reproduced before the first divergence, per item, then averages', () => {
    // a: diverges at index 3 of 4 → 0.75; b: diverges at 0 of 2 → 0; c: identical → 1.
    const result = tokenAgreement(items({ a: [1, 2, 3, 4], b: [5, 6], c: [9] }), items({ a: [1, 2, 3, 9, 9], b: [6, 6], c: [9] }));
    expect(result.mean).toBeCloseTo((0.75 + 0 + 1) / 3, 12);
    expect(result.exact_match_rate).toBeCloseTo(1 / 3, 12);
    expect(result.first_divergence_index_mean).toBe(1.5);
    expect(result.items).toBe(3);
  });

  it('a candidate that stops early reproduced only its own length; one that runs on reproduced all, but is no exact match', () => {
    const early = tokenAgreement(items({ a: [1, 2, 3, 4] }), items({ a: [1, 2] }));
    expect(early).toMatchObject({ mean: 0.5, exact_match_rate: 0, first_divergence_index_mean: 2 });
    const longer = tokenAgreement(items({ a: [1, 2] }), items({ a: [1, 2, 3] }));
    expect(longer).toMatchObject({ mean: 1, exact_match_rate: 0, first_divergence_index_mean: 2 });
  });

  it('pairs items by key and leaves out items missing on either side; nothing paired gives null with a reason', () => {
    expect(tokenAgreement(items({ a: [1], b: [2] }), items({ b: [2], c: [3] }))).toMatchObject({ mean: 1, items: 1 });
    expect(tokenAgreement(items({ a: [1] }), items({ z: [1] }))).toEqual({
      mean: null,
      exact_match_rate: null,
      first_divergence_index_mean: null,
      items: 0,
      error: 'no items with tokens on both sides',
    });
  });

  it('an empty baseline output is matched only by an empty candidate', () => {
    expect(tokenAgreement(items({ a: [] }), items({ a: [] }))).toMatchObject({ mean: 1, exact_match_rate: 1 });
    expect(tokenAgreement(items({ a: [] }), items({ a: [4] }))).toMatchObject({
      mean: 0,
      exact_match_rate: 0,
      first_divergence_index_mean: 0,
    });
  });

  it('first divergence is the first differing index, or the shorter length', () => {
    expect(firstDivergence([1, 2, 3], [1, 2, 3])).toBe(3);
    expect(firstDivergence([1, 2, 3], [1, 5, 3])).toBe(1);
    expect(firstDivergence([], [1])).toBe(0);
  });
});
