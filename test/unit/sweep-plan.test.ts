import { describe, expect, it } from 'vitest';
import { byLoadLevel, sweepRecommendation, type SweepPoint } from '../../src/main/experiments/kinds/sweep/plan';

const point = (
  name: string,
  concurrency: number,
  throughput: number | null,
  latencyP95: number | null,
  goodput: number | null,
  goodputFraction: number | null,
): SweepPoint => ({ name, concurrency, throughput, latencyP95, goodput, goodputFraction });

const points = [
  point('np=1 @ c=1', 1, 40, 100, 1.0, 1),
  point('np=1 @ c=4', 4, 60, 900, 1.5, 0.5),
  point('np=4 @ c=1', 1, 38, 110, 0.95, 1),
  point('np=4 @ c=4', 4, 120, 300, 3.0, 0.95),
];

describe('sweep grouping', () => {
  it('groups conditions by load level, the first setting of each level first (its baseline)', () => {
    expect(byLoadLevel(points).map((group) => group.map((entry) => entry.name))).toEqual([
      ['np=1 @ c=1', 'np=4 @ c=1'],
      ['np=1 @ c=4', 'np=4 @ c=4'],
    ]);
  });
});

describe('sweep recommendation', () => {
  it('without an SLO names the Pareto set and no winner', () => {
    const result = sweepRecommendation(points, null, 0.9);
    expect(result.choice).toBeNull();
    expect(result.pareto).toEqual(['np=1 @ c=1', 'np=4 @ c=4']);
    expect(result.reason).toMatch(/no single winner/);
    expect(result.reason).toMatch(/np=1 @ c=1, np=4 @ c=4/);
    expect(result.excluded).toEqual([]);
  });

  it('without an SLO says when p95 is missing rather than pretending a front exists', () => {
    const result = sweepRecommendation([point('a', 1, 10, null, 1, 1), point('b', 1, 20, null, 1, 1)], null, 0.9);
    expect(result.choice).toBeNull();
    expect(result.pareto).toEqual([]);
    expect(result.reason).toMatch(/No condition has a TTFT p95/);
  });

  it('with an SLO picks the highest goodput among those meeting it and says why the others were not chosen', () => {
    const result = sweepRecommendation(points, { ttft_ms: 500 }, 0.9);
    expect(result.choice).toBe('np=4 @ c=4');
    expect(result.reason).toMatch(/3 of 4 conditions/);
    const excluded = Object.fromEntries(result.excluded.map((item) => [item.name, item.reason]));
    expect(excluded['np=1 @ c=4']).toMatch(/good on 50 % of requests, below the 90 % target/);
    expect(excluded['np=1 @ c=1']).toMatch(/less goodput/);
    expect(Object.keys(excluded)).toHaveLength(3);
  });

  it('with an SLO nobody meets, chooses nothing', () => {
    const result = sweepRecommendation([point('a', 1, 10, 10, 0.1, 0.2), point('b', 1, 20, 10, null, null)], { ttft_ms: 1 }, 0.9);
    expect(result.choice).toBeNull();
    expect(result.reason).toMatch(/No condition had at least 90 % good requests/);
    expect(result.reason).not.toMatch(/Acceptance, not latency/);
    expect(result.excluded.map((item) => item.reason)).toEqual([expect.stringMatching(/20 %/), 'no measured requests']);
  });

  it('says when acceptance, not latency, kept every condition out, with both shares', () => {
    const fast = (name: string): SweepPoint => ({
      ...point(name, 1, 100, 20, 0, 0),
      withinSloFraction: 1,
      acceptedFraction: name === 'a' ? 0 : 0.25,
    });
    const result = sweepRecommendation([fast('a'), fast('b')], { ttft_ms: 5000 }, 0.9);
    expect(result.choice).toBeNull();
    expect(result.reason).toMatch(/Acceptance, not latency, kept them out: .* at most 25 % of requests passed/);
    expect(result.excluded.map((item) => item.reason)).toEqual([
      'good on 0 % of requests (100 % within the SLOs, 0 % passed acceptance), below the 90 % target',
      'good on 0 % of requests (100 % within the SLOs, 25 % passed acceptance), below the 90 % target',
    ]);
  });
});
