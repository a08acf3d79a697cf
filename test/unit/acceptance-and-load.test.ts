import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/main/core/random';
import { arrivalGaps } from '../../src/main/runner/arrivals';
import { generateLoad } from '../../src/main/runner/load-generator';
import { measuredRequest, summarizeCompleted } from '../support/measured-request';
import { evaluateAcceptance } from '../../src/main/workload/acceptance';

describe('acceptance checks', () => {
  it('judges contains, regex, exact, max_length, JSON schema and reference outputs', () => {
    const schema = { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } };
    expect(evaluateAcceptance([{ contains: 'Paris' }, { regex: '^The' }, { max_length: 40 }], 'The capital is Paris.', null)).toEqual({
      accepted: true,
      results: [
        { check: 'contains', passed: true },
        { check: 'regex', passed: true },
        { check: 'max_length', passed: true, detail: '21 chars' },
      ],
    });
    expect(evaluateAcceptance([{ exact: 'yes' }], ' yes\n', null).accepted).toBe(true);
    expect(evaluateAcceptance([{ json_schema: schema }], '```json\n{"n": 3}\n```', null).accepted).toBe(true);
    const wrong = evaluateAcceptance([{ json_schema: schema }], '{"n": "three"}', null);
    expect(wrong.accepted).toBe(false);
    expect(wrong.results[0]!.detail).toMatch(/must be integer/);
    expect(evaluateAcceptance([{ json_schema: schema }], 'not json', null).results[0]!.detail).toMatch(/^not JSON/);
    expect(evaluateAcceptance([{ equals_reference: true }], 'abc', null)).toEqual({
      accepted: null,
      results: [{ check: 'equals_reference', passed: null, detail: 'no reference output for this item' }],
    });
    expect(evaluateAcceptance([{ equals_reference: true }], 'abc', 'abd').accepted).toBe(false);
    expect(evaluateAcceptance([], 'anything', null).accepted).toBeNull();
  });
});

describe('open-loop arrivals', () => {
  it('have mean gap 1/rate; burstiness sets the spread (Poisson at 1)', () => {
    const stats = (burstiness: number) => {
      const next = arrivalGaps(50, burstiness, seededRandom(5));
      const gaps = Array.from({ length: 20000 }, next);
      const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
      const sd = Math.sqrt(gaps.reduce((a, b) => a + (b - mean) ** 2, 0) / gaps.length);
      return { mean, cv: sd / mean };
    };
    const poisson = stats(1);
    expect(poisson.mean).toBeGreaterThan(19);
    expect(poisson.mean).toBeLessThan(21);
    expect(poisson.cv).toBeGreaterThan(0.95);
    expect(poisson.cv).toBeLessThan(1.05);
    // Gamma with shape k has CV 1/sqrt(k).
    expect(stats(4).cv).toBeCloseTo(0.5, 1);
    expect(stats(0.25).cv).toBeCloseTo(2, 0);
  });
});

describe('load generator', () => {
  it('keeps closed-loop concurrency at N and excludes warmup from the measured count', async () => {
    let active = 0;
    let peak = 0;
    const calls: boolean[] = [];
    const outcome = await generateLoad({
      load: { mode: 'closed', concurrency: 3 },
      stop: { requests: 12, durationMs: null },
      warmup: 2,
      halt: new AbortController().signal,
      send: async (_index, warmup) => {
        calls.push(warmup);
        active += 1;
        peak = Math.max(peak, active);
        await new Promise((resolve) => setTimeout(resolve, 5));
        active -= 1;
        return true;
      },
    });
    expect(calls.filter(Boolean)).toHaveLength(2);
    expect(calls.filter((warmup) => !warmup)).toHaveLength(12);
    expect(calls.slice(0, 2)).toEqual([true, true]);
    expect(peak).toBe(3);
    expect(outcome.stoppedBy).toBe('requests');
  });

  it('waits at the start line after the warmup: nothing measured is sent before it opens', async () => {
    const events: string[] = [];
    let open!: () => void;
    const line = new Promise<void>((resolve) => (open = resolve));
    const outcome = generateLoad({
      load: { mode: 'closed', concurrency: 1 },
      stop: { requests: 2, durationMs: null },
      warmup: 1,
      halt: new AbortController().signal,
      atStartLine: async () => {
        events.push('at the line');
        await line;
      },
      send: async (_index, warmup) => {
        events.push(warmup ? 'warmup' : 'measured');
        return true;
      },
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(events).toEqual(['warmup', 'at the line']);
    open();
    await outcome;
    expect(events).toEqual(['warmup', 'at the line', 'measured', 'measured']);
  });

  it('holds an open-loop schedule and never exceeds the outstanding bound', async () => {
    let active = 0;
    let peak = 0;
    const slips: number[] = [];
    const scheduled: number[] = [];
    await generateLoad({
      load: { mode: 'open', rate: 200, burstiness: 1, maxOutstanding: 4 },
      stop: { requests: 60, durationMs: null },
      warmup: 0,
      halt: new AbortController().signal,
      send: async (_index, _warmup, scheduledAt) => {
        scheduled.push(scheduledAt!);
        slips.push(performance.now() - scheduledAt!);
        active += 1;
        peak = Math.max(peak, active);
        await new Promise((resolve) => setTimeout(resolve, 2));
        active -= 1;
        return true;
      },
    });
    expect(slips).toHaveLength(60);
    expect(peak).toBeLessThanOrEqual(4);
    expect(slips.every((slip) => slip >= 0)).toBe(true);
    // The schedule itself runs at the asked rate: 59 exponential gaps of mean 5 ms have a mean
    // within ±2.6 ms (four standard errors) of it, whatever the machine's speed.
    const gaps = scheduled.slice(1).map((at, index) => at - scheduled[index]!);
    expect(gaps.every((gap) => gap >= 0)).toBe(true);
    const meanGap = gaps.reduce((sum, gap) => sum + gap, 0) / gaps.length;
    expect(meanGap).toBeGreaterThan(5 - 2.6);
    expect(meanGap).toBeLessThan(5 + 2.6);
  });

  it('stops scheduling when halted', async () => {
    const halt = new AbortController();
    let sent = 0;
    const outcome = await generateLoad({
      load: { mode: 'closed', concurrency: 1 },
      stop: { requests: null, durationMs: 60_000 },
      warmup: 0,
      halt: halt.signal,
      send: async () => {
        sent += 1;
        if (sent === 5) halt.abort();
        return true;
      },
    });
    expect(sent).toBe(5);
    expect(outcome.stoppedBy).toBe('halted');
  });
});

const row = measuredRequest;

describe('run summary', () => {
  it('keeps failures in every denominator, excludes warmup, and applies SLOs to goodput', () => {
    const rows = [
      row(0, { warmup: true, ttft_ms: 9999 }),
      row(1),
      row(2, { ttft_ms: 500 }),
      row(3, { accepted: false }),
      row(4, { error_class: 'total_timeout', ttft_ms: null, e2e_ms: null, end_ms: null }),
      row(5, { group_name: 'other', accepted: true }),
    ];
    const summary = summarizeCompleted(rows, { load: { mode: 'closed', concurrency: 2 }, slo: { ttft_ms: 100 } });
    expect(summary.warmup_requests).toBe(1);
    expect(summary.requests).toEqual({
      attempted: 5,
      completed: 4,
      failed: 1,
      accepted: 3,
      checked: 2,
      failures_by_class: { total_timeout: 1 },
    });
    expect(summary.metrics.ttft_ms.n).toBe(4);
    expect(summary.metrics.ttft_ms.max).toBe(500);
    expect(summary.metrics.itl_ms.n).toBe(8);
    expect(summary.accepted_rate).toBeCloseTo(3 / 5);
    // Good: 1 and 5 (2 misses the TTFT SLO, 3 was rejected, 4 failed).
    expect(summary.goodput.fraction).toBeCloseTo(2 / 5);
    // Within the SLOs, acceptance aside: 1, 3 and 5 (3 was rejected but fast).
    expect(summary.goodput.within_slo_fraction).toBeCloseTo(3 / 5);
    expect(summary.measurement.window_ms).toBe(550 - 100);
    expect(summary.throughput.requests_per_s).toBeCloseTo(4 / 0.45);
    expect(summary.throughput.output_tokens_total).toBe(80);
    expect(Object.keys(summary.groups).sort()).toEqual(['g', 'other']);
    expect(summary.measurement.unsupported_percentiles.ttft_ms).toEqual(['p90', 'p95', 'p99']);
  });

  it('reports offered and achieved load and flags a generator that fell behind', () => {
    const rows = Array.from({ length: 50 }, (_, i) => row(i, { scheduled_ms: i * 100, t0_ms: i * 100 + (i > 40 ? 300 : 0.5) }));
    const summary = summarizeCompleted(rows, { load: { mode: 'open', rate: 10, burstiness: 1, max_outstanding: 8 } });
    expect(summary.load.offered).toBe(10);
    // 50 sends cannot support a p99: it is withheld and the largest slip judges the generator.
    expect(summary.load.slip_ms_p99).toBeNull();
    expect(summary.load.slip_ms_max).toBeGreaterThan(100);
    expect(summary.load.client_bound).toBe(true);
    expect(summary.load.note).toMatch(/fell behind its schedule/);
  });
});
