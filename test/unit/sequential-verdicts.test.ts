import { describe, expect, it } from 'vitest';
import { sequentialBoundary, sequentialPValue, zOfT } from '../../src/main/metrics/sequential-boundary';
import { decideLook, everyVerdictSettled } from '../../src/main/metrics/sequential-verdicts';
import { DEFAULT_VERDICT_SETTINGS, type VerdictQuestion } from '../../src/main/metrics/window-verdicts';

const windowsAround = (centres: number[]) => centres.map((centre) => Array.from({ length: 8 }, (_, i) => centre * (1 + (i - 3.5) * 0.01)));

describe('sequential boundaries', () => {
  it('turns a t into the z with the same tail, on both sides', () => {
    expect(zOfT(0, 4)).toBeCloseTo(0, 12);
    // t(0.975, 4 df) = 2.776: the same tail as z = 1.960.
    expect(zOfT(2.776445, 4)).toBeCloseTo(1.96, 3);
    expect(zOfT(-2.776445, 4)).toBeCloseTo(-1.96, 3);
    expect(zOfT(1e6, 4)).toBeGreaterThan(8);
  });

  it('matches the theory: one look is the fixed test, two looks the O’Brien–Fleming boundary', () => {
    expect(sequentialBoundary({ looks: [6] }, 0.05, 'two-sided')).toBeCloseTo(1.96, 1);
    expect(sequentialBoundary({ looks: [6] }, 0.05, 'one-sided')).toBeCloseTo(1.645, 1);
    // Two equally spaced looks at α = 0.05 with a known variance: 2.797 at the first, 1.977 at the last (z
    // scale). Variances estimated from 3 and 6 windows tie the two looks less closely, so the last stands a
    // little higher (2.011 simulated).
    expect(sequentialBoundary({ looks: [3, 6] }, 0.05, 'two-sided')).toBeGreaterThan(1.97);
    expect(sequentialBoundary({ looks: [3, 6] }, 0.05, 'two-sided')).toBeLessThan(2.04);
  });

  it('gives a p-value at most α exactly above the boundary, and none finer than the simulation resolves', () => {
    const plan = { looks: [3, 6] };
    for (const alpha of [0.05, 0.01, 0.00625]) {
      for (const sided of ['two-sided', 'one-sided'] as const) {
        const boundary = sequentialBoundary(plan, alpha, sided);
        expect(sequentialPValue(plan, boundary, sided)).toBeGreaterThan(alpha);
        expect(sequentialPValue(plan, boundary + 1e-9, sided)).toBeLessThanOrEqual(alpha);
      }
    }
    expect(sequentialBoundary(plan, 1e-6, 'two-sided')).toBe(Number.POSITIVE_INFINITY);
    expect(sequentialPValue(plan, 100, 'two-sided')).toBeGreaterThan(0);
  });

  it('refuses looks that are not ascending whole windows of at least 2', () => {
    expect(() => sequentialBoundary({ looks: [6, 3] }, 0.05, 'two-sided')).toThrow(/ascending looks/);
    expect(() => sequentialBoundary({ looks: [1, 3] }, 0.05, 'two-sided')).toThrow(/ascending looks/);
    expect(() => sequentialBoundary({ looks: [] }, 0.05, 'two-sided')).toThrow(/ascending looks/);
  });
});

describe('a look of sequential verdicts', () => {
  const settings = { ...DEFAULT_VERDICT_SETTINGS, sequential: { looks: [3, 6] } };
  const question = (a: number[], b: number[], metric = 'ttft_ms p50'): VerdictQuestion => ({
    metric,
    a: 'base',
    b: 'other',
    aWindows: windowsAround(a),
    bWindows: windowsAround(b),
    statistic: 'p50',
  });

  it('decides a large difference at the first look and keeps that look’s row once more windows come', () => {
    const base = [100, 101, 99, 100, 102, 98];
    const slower = [200, 203, 198, 199, 201, 202];
    const [first] = decideLook([question(base.slice(0, 3), slower.slice(0, 3))], settings);
    expect(first).toMatchObject({ verdict: 'slower', windows: [3, 3] });
    const [later] = decideLook([question(base, slower)], settings);
    expect(later).toMatchObject({ verdict: 'slower', windows: [3, 3] });
    expect(later!.relative_ci![0]).toBeGreaterThan(0);
  });

  it('leaves a small difference open at the first look, saying so, and answers it at the last', () => {
    const base = [100, 104, 97, 101, 99, 103];
    const near = [103, 101, 106, 99, 104, 102];
    const [open] = decideLook([question(base.slice(0, 3), near.slice(0, 3))], settings);
    expect(open!.verdict).toBe('no significant difference');
    expect(open!.note).toMatch(/^open after 3 of 6 windows/);
    expect(everyVerdictSettled([open!])).toBe(false);
    const [last] = decideLook([question(base, near)], settings);
    expect(last!.windows).toEqual([6, 6]);
    expect(last!.note ?? '').not.toMatch(/^open/);
  });

  it('counts a withheld verdict as settled, and too few windows as open', () => {
    const [few] = decideLook([question([100, 101], [200, 201])], settings);
    expect(few!.verdict).toBe('insufficient data');
    expect(everyVerdictSettled([few!])).toBe(false);
    expect(everyVerdictSettled([{ ...few!, note: 'no verdict: other is contaminated (see its condition row)' }])).toBe(true);
  });
});
