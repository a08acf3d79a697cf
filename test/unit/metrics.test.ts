import { describe, expect, it } from 'vitest';
import { percentile, percentileSupported, summarize, unsupportedPercentiles } from '../../src/main/metrics/distribution';
import { deriveRequestMetrics } from '../../src/main/metrics/request-metrics';
import type { summarizeRun } from '../../src/main/metrics/run-summary';
import { formatPercentile } from '../../src/main/cli/format';
import type { MeasuredRequest } from '../../src/shared/contract/measurement';
import { measuredRequest, summarizeCompleted } from '../support/measured-request';
import { handMadeCompletion } from '../support/streamed-completion';

const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe('distribution', () => {
  it('interpolates percentiles linearly like NumPy', () => {
    // numpy.percentile([1, 2, 3, 4], [50, 90, 95, 99]) -> 2.5, 3.7, 3.85, 3.97
    expect(percentile([1, 2, 3, 4], 0.5)).toBeCloseTo(2.5);
    expect(percentile([1, 2, 3, 4], 0.9)).toBeCloseTo(3.7);
    expect(percentile([1, 2, 3, 4], 0.95)).toBeCloseTo(3.85);
    expect(percentile([1, 2, 3, 4], 0.99)).toBeCloseTo(3.97);
    // numpy.percentile(range(1, 101), [50, 90, 95, 99]) -> 50.5, 90.1, 95.05, 99.01
    const summary = summarize(range(100).reverse());
    expect([summary.p50, summary.p90, summary.p95, summary.p99].map((value) => Number(value!.toFixed(6)))).toEqual([
      50.5, 90.1, 95.05, 99.01,
    ]);
    expect(summary.unsupported).toEqual([]);
    const small = summarize([4, 1, 3, 2]);
    expect(small.mean).toBeCloseTo(2.5);
    // numpy.std([1, 2, 3, 4], ddof=1)
    expect(small.std).toBeCloseTo(1.2909944);
    expect([small.min, small.max, small.n, small.p50]).toEqual([1, 4, 4, 2.5]);
  });

  it('reports null, never zero, when nothing was measured', () => {
    expect(summarize([])).toEqual({
      n: 0,
      mean: null,
      std: null,
      p50: null,
      p90: null,
      p95: null,
      p99: null,
      min: null,
      max: null,
      unsupported: [],
    });
    const single = summarize([5]);
    expect(single.std).toBeNull();
    expect(single.p50).toBe(5);
    expect(single.p99).toBeNull();
    expect(percentile([], 0.5)).toBeNull();
  });

  it('ignores non-finite values', () => {
    expect(summarize([1, Number.NaN, 3]).n).toBe(2);
  });

  it('withholds each tail percentile below its minimum n (p90 10, p95 20, p99 100)', () => {
    const at = (n: number) => summarize(range(n));
    expect(at(9)).toMatchObject({ p50: 5, p90: null, p95: null, p99: null, unsupported: ['p90', 'p95', 'p99'] });
    // numpy.percentile(range(1, 11), 90) -> 9.1
    expect(at(10)).toMatchObject({ p95: null, p99: null, unsupported: ['p95', 'p99'] });
    expect(at(10).p90).toBeCloseTo(9.1);
    expect(at(19)).toMatchObject({ p95: null, p99: null, unsupported: ['p95', 'p99'] });
    expect(at(19).p90).toBeCloseTo(17.2);
    // numpy.percentile(range(1, 21), 95) -> 19.05
    expect(at(20).p95).toBeCloseTo(19.05);
    expect(at(20)).toMatchObject({ p99: null, unsupported: ['p99'] });
    expect(at(99)).toMatchObject({ p99: null, unsupported: ['p99'] });
    expect(at(99).p95).toBeCloseTo(94.1);
    // numpy.percentile(range(1, 101), 99) -> 99.01
    expect(at(100).p99).toBeCloseTo(99.01);
    expect(at(100).unsupported).toEqual([]);
    expect(unsupportedPercentiles(0)).toEqual([]);
  });

  it('knows when a tail percentile has too few samples, by the same rule', () => {
    expect(percentileSupported(9, 0.9)).toBe(false);
    expect(percentileSupported(10, 0.9)).toBe(true);
    expect(percentileSupported(19, 0.95)).toBe(false);
    expect(percentileSupported(20, 0.95)).toBe(true);
    expect(percentileSupported(99, 0.99)).toBe(false);
    expect(percentileSupported(100, 0.99)).toBe(true);
  });

  it('prints "n too small" for a withheld percentile', () => {
    expect(formatPercentile(summarize(range(19)), 'p95')).toBe('n too small');
    // numpy.percentile(range(10, 201, 10), 95) -> 190.5
    expect(formatPercentile(summarize(range(20).map((value) => value * 10)), 'p95')).toBe('190.5 ms');
    expect(formatPercentile(summarize(range(19)), 'p50')).toBe('10.0 ms');
    expect(formatPercentile(summarize([]), 'p99')).toBe('—');
    // A summary stored before `unsupported` existed is judged from n.
    expect(formatPercentile({ n: 16, p95: 12 }, 'p95')).toBe('n too small');
    expect(formatPercentile({ n: 16, p90: 12 }, 'p90')).toBe('12.0 ms');
  });
});

const completion = handMadeCompletion;

describe('per-request metrics', () => {
  it('derives TTFT, TPOT, ITL, E2E, queue, client overhead and decode rate per the contract', () => {
    // Four content chunks, the EOS sampled at 1058 (finish chunk), usage at 1060, [DONE] at 1062.
    const metrics = deriveRequestMetrics(
      completion({
        contentChunkTimes: [1020, 1030, 1045, 1050],
        answerChunkTimes: [1020, 1030, 1045, 1050],
        finishAt: 1058,
        endAt: 1062,
        usage: { prompt_tokens: 10, completion_tokens: 5, cached_tokens: 0 },
        timings: { prompt_n: 10, prompt_ms: 12, predicted_n: 5, predicted_ms: 32, cache_n: 0, draft_n: null, draft_n_accepted: null },
      }),
    );
    expect(metrics.ttft_ms).toBe(20);
    expect(metrics.ttfa_ms).toBe(20);
    expect(metrics.ttfr_ms).toBeNull();
    expect(metrics.e2e_ms).toBe(58);
    // (58 − 20) / (5 − 1)
    expect(metrics.tpot_ms).toBe(9.5);
    expect(metrics.itl_ms).toEqual([10, 15, 5]);
    expect(metrics.output_tokens).toBe(5);
    expect(metrics.output_tokens_source).toBe('usage');
    // 20 − 12: prompt_ms already ends at the first sampled token.
    expect(metrics.queue_ms).toBe(8);
    expect(metrics.client_overhead_ms).toBe(58 - 44);
    // 4 decode steps in 32 ms.
    expect(metrics.decode_tokens_per_s).toBe(125);
  });

  it('uses usage tokens for TPOT even when chunks carry several tokens', () => {
    const metrics = deriveRequestMetrics(
      completion({
        contentChunkTimes: [1010, 1110],
        finishAt: 1111,
        endAt: 1112,
        usage: { prompt_tokens: 3, completion_tokens: 11, cached_tokens: null },
      }),
    );
    expect(metrics.tpot_ms).toBe(10.1);
    expect(metrics.itl_ms).toEqual([100]);
  });

  it('gives "Paris" + EOS one step of TPOT and a one-token output none', () => {
    const paris = deriveRequestMetrics(
      completion({
        contentChunkTimes: [1030],
        finishAt: 1042,
        endAt: 1043,
        usage: { prompt_tokens: 5, completion_tokens: 2, cached_tokens: null },
      }),
    );
    expect(paris.tpot_ms).toBe(12);
    const one = deriveRequestMetrics(
      completion({
        contentChunkTimes: [1030],
        finishAt: 1030,
        endAt: 1031,
        usage: { prompt_tokens: 5, completion_tokens: 1, cached_tokens: null },
        timings: { prompt_n: 5, prompt_ms: 20, predicted_n: 1, predicted_ms: 0.001, cache_n: 0, draft_n: null, draft_n_accepted: null },
      }),
    );
    expect(one.tpot_ms).toBeNull();
    // One token is no decode step: no rate rather than 1 / 0.001 ms.
    expect(one.decode_tokens_per_s).toBeNull();
    expect(one.queue_ms).toBe(10);
  });

  it('falls back to the stream end only when no finish time was recorded', () => {
    const metrics = deriveRequestMetrics(
      completion({ contentChunkTimes: [1010, 1020], endAt: 1040, usage: { prompt_tokens: 1, completion_tokens: 3, cached_tokens: null } }),
    );
    expect(metrics.e2e_ms).toBe(40);
    expect(metrics.tpot_ms).toBe(15);
  });

  it('falls back to a labelled client count without usage, and leaves the unmeasurable null', () => {
    const metrics = deriveRequestMetrics(completion({ contentChunkTimes: [1010], finishAt: 1012, endAt: 1012 }));
    expect(metrics.output_tokens).toBe(1);
    expect(metrics.output_tokens_source).toBe('client_chunks');
    expect(metrics.tpot_ms).toBeNull();
    expect(metrics.queue_ms).toBeNull();
    expect(metrics.client_overhead_ms).toBeNull();
  });

  it('times reasoning and answer apart; TTFT is the first token of either kind', () => {
    const metrics = deriveRequestMetrics(
      completion({
        contentChunkTimes: [1015, 1025, 1060, 1070],
        reasoningChunkTimes: [1015, 1025],
        answerChunkTimes: [1060, 1070],
        finishAt: 1080,
        endAt: 1081,
        usage: { prompt_tokens: 4, completion_tokens: 6, cached_tokens: null },
      }),
    );
    expect([metrics.ttft_ms, metrics.ttfr_ms, metrics.ttfa_ms]).toEqual([15, 15, 60]);
    expect(metrics.tpot_ms).toBe(13);
  });

  it('gives a failed request no end-to-end latency', () => {
    const metrics = deriveRequestMetrics(completion({ endAt: 1500, error: { class: 'connect', message: 'refused' }, httpStatus: null }));
    expect(metrics.e2e_ms).toBeNull();
    expect(metrics.ttft_ms).toBeNull();
    expect(metrics.output_tokens).toBeNull();
  });
});

const row = measuredRequest;

const run = (rows: MeasuredRequest[], load: Parameters<typeof summarizeRun>[0]['load'], serverSlots: number | null = null) =>
  summarizeCompleted(rows, { load, serverSlots });

describe('run summary', () => {
  it('nulls unsupported percentiles in every distribution, with the reason', () => {
    const summary = run(
      Array.from({ length: 19 }, (_, i) => row(i, { ttft_ms: i + 1 })),
      { mode: 'closed', concurrency: 1 },
    );
    expect(summary.metrics.ttft_ms).toMatchObject({ n: 19, p50: 10, p95: null, p99: null, unsupported: ['p95', 'p99'] });
    expect(summary.groups.g!.metrics.ttft_ms.unsupported).toEqual(['p95', 'p99']);
    // 19 requests × 2 gaps: ITL supports p95 but not p99.
    expect(summary.metrics.itl_ms).toMatchObject({ n: 38, p99: null, unsupported: ['p99'] });
    expect(summary.measurement.unsupported_percentiles).toMatchObject({ ttft_ms: ['p95', 'p99'], itl_ms: ['p99'] });
    expect(summary.measurement.percentile_min_n).toEqual({ p50: 1, p90: 10, p95: 20, p99: 100 });
    const twenty = run(
      Array.from({ length: 20 }, (_, i) => row(i, { ttft_ms: i + 1 })),
      { mode: 'closed', concurrency: 1 },
    );
    expect(twenty.metrics.ttft_ms.p95).toBeCloseTo(19.05);
    expect(twenty.measurement.unsupported_percentiles.ttft_ms).toEqual(['p99']);
  });

  it('reports open-loop latency from the schedule and an achieved rate without the drain', () => {
    // Ten sends scheduled every 100 ms, each sent 50 ms late and slow (4 s e2e): the drain
    // after the last send (at 950) lasts until 4950.
    const rows = Array.from({ length: 10 }, (_, i) =>
      row(i, {
        scheduled_ms: i * 100,
        t0_ms: i * 100 + 50,
        end_ms: i * 100 + 50 + 4000,
        ttft_ms: 30,
        e2e_ms: 4000,
        ttft_from_schedule_ms: 80,
        e2e_from_schedule_ms: 4050,
      }),
    );
    const summary = run(rows, { mode: 'open', rate: 10, burstiness: 1, max_outstanding: 64 });
    // 9 gaps over the 900 ms from first to last send; attempted/window would give 10 / 4.9 s.
    expect(summary.load.achieved).toBe(10);
    expect(summary.throughput.requests_per_s).toBeCloseTo(10 / 4.9);
    expect(summary.schedule_latency!.ttft_from_schedule_ms).toMatchObject({ n: 10, p50: 80, p90: 80, p95: null });
    expect(summary.schedule_latency!.e2e_from_schedule_ms).toMatchObject({ n: 10, p50: 4050 });
    // Below 100 sends the slip p99 is withheld and the largest slip judges the generator.
    expect(summary.load.slip_ms_p99).toBeNull();
    expect(summary.load.slip_ms_max).toBe(50);
    expect(summary.load.client_bound).toBe(false);
    // Rows stored before the column existed are derived from scheduled, sent and TTFT times.
    const legacy = run(
      rows.map((r) => ({ ...r, ttft_from_schedule_ms: undefined, e2e_from_schedule_ms: undefined })),
      { mode: 'open', rate: 10, burstiness: 1, max_outstanding: 64 },
    );
    expect(legacy.schedule_latency!.ttft_from_schedule_ms.p50).toBe(80);
    expect(run(rows, { mode: 'closed', concurrency: 2 }).schedule_latency).toBeNull();
  });

  it('flags a generator that fell behind by its largest slip when p99 is unsupported', () => {
    const rows = Array.from({ length: 20 }, (_, i) => row(i, { scheduled_ms: i * 100, t0_ms: i * 100 + (i === 19 ? 300 : 0.5) }));
    const summary = run(rows, { mode: 'open', rate: 10, burstiness: 1, max_outstanding: 8 });
    expect(summary.load.client_bound).toBe(true);
    expect(summary.load.note).toMatch(/^the generator fell behind its schedule \(max slip 300\.0 ms against a mean gap of 100\.0 ms\)/);
  });

  it('says when requests could wait for a server slot, beside client_overhead_ms', () => {
    const rows = [row(0), row(1)];
    expect(run(rows, { mode: 'closed', concurrency: 8 }, 4).measurement).toMatchObject({
      server_slots: 4,
      client_overhead_ms: 'includes any wait for a free server slot',
      slot_wait_note:
        'concurrency 8 against 4 server slots: requests waited for a free slot, and that wait is in client_overhead_ms (and in ttft_ms and e2e_ms)',
    });
    expect(run(rows, { mode: 'open', rate: 5, burstiness: 1, max_outstanding: 16 }, 1).measurement.slot_wait_note).toMatch(
      /^up to 16 outstanding requests against 1 server slot:/,
    );
    expect(run(rows, { mode: 'closed', concurrency: 4 }, 4).measurement.slot_wait_note).toBeNull();
    expect(run(rows, { mode: 'closed', concurrency: 8 }, null).measurement.slot_wait_note).toBeNull();
  });
});
