import { describe, expect, it } from 'vitest';
import { percentile, percentileSupported, summarize } from '../../src/main/metrics/distribution';
import { deriveRequestMetrics } from '../../src/main/metrics/request-metrics';
import type { StreamedCompletion } from '../../src/main/runner/stream-client';

describe('distribution', () => {
  it('interpolates percentiles linearly like NumPy', () => {
    // numpy.percentile([1, 2, 3, 4], [50, 90, 95, 99]) -> 2.5, 3.7, 3.85, 3.97
    const summary = summarize([4, 1, 3, 2]);
    expect(summary.p50).toBeCloseTo(2.5);
    expect(summary.p90).toBeCloseTo(3.7);
    expect(summary.p95).toBeCloseTo(3.85);
    expect(summary.p99).toBeCloseTo(3.97);
    expect(summary.mean).toBeCloseTo(2.5);
    // numpy.std([1, 2, 3, 4], ddof=1)
    expect(summary.std).toBeCloseTo(1.2909944);
    expect([summary.min, summary.max, summary.n]).toEqual([1, 4, 4]);
  });

  it('reports null, never zero, when nothing was measured', () => {
    expect(summarize([])).toEqual({ n: 0, mean: null, std: null, p50: null, p90: null, p95: null, p99: null, min: null, max: null });
    const single = summarize([5]);
    expect(single.std).toBeNull();
    expect(single.p99).toBe(5);
    expect(percentile([], 0.5)).toBeNull();
  });

  it('ignores non-finite values', () => {
    expect(summarize([1, Number.NaN, 3]).n).toBe(2);
  });

  it('knows when a tail percentile has too few samples', () => {
    expect(percentileSupported(20, 0.99)).toBe(false);
    expect(percentileSupported(100, 0.99)).toBe(true);
    expect(percentileSupported(20, 0.95)).toBe(true);
  });
});

function completion(overrides: Partial<StreamedCompletion>): StreamedCompletion {
  return {
    t0: 1000, headersAt: 1005, contentChunkTimes: [], endAt: null, httpStatus: 200, finishReason: 'stop',
    text: '', usage: null, timings: null, error: null, ...overrides,
  };
}

describe('per-request metrics', () => {
  it('derives TTFT, TPOT, ITL, E2E, queue and client overhead per the contract', () => {
    const metrics = deriveRequestMetrics(completion({
      contentChunkTimes: [1020, 1030, 1045, 1050],
      endAt: 1052,
      usage: { prompt_tokens: 10, completion_tokens: 4, cached_tokens: 0 },
      timings: { prompt_n: 10, prompt_ms: 12, predicted_n: 4, predicted_ms: 32, cache_n: 0 },
    }));
    expect(metrics.ttft_ms).toBe(20);
    expect(metrics.e2e_ms).toBe(52);
    expect(metrics.tpot_ms).toBeCloseTo(30 / 3);
    expect(metrics.itl_ms).toEqual([10, 15, 5]);
    expect(metrics.output_tokens).toBe(4);
    expect(metrics.output_tokens_source).toBe('usage');
    // 20 - 12 - 32/4
    expect(metrics.queue_ms).toBe(0);
    expect(metrics.client_overhead_ms).toBe(52 - 44);
    expect(metrics.decode_tokens_per_s).toBeCloseTo(125);
  });

  it('uses usage tokens for TPOT even when chunks carry several tokens', () => {
    const metrics = deriveRequestMetrics(completion({
      contentChunkTimes: [1010, 1110],
      endAt: 1111,
      usage: { prompt_tokens: 3, completion_tokens: 11, cached_tokens: null },
    }));
    expect(metrics.tpot_ms).toBe(10);
    expect(metrics.itl_ms).toEqual([100]);
  });

  it('falls back to a labelled client count without usage, and leaves the unmeasurable null', () => {
    const metrics = deriveRequestMetrics(completion({ contentChunkTimes: [1010], endAt: 1012 }));
    expect(metrics.output_tokens).toBe(1);
    expect(metrics.output_tokens_source).toBe('client_chunks');
    expect(metrics.tpot_ms).toBeNull();
    expect(metrics.queue_ms).toBeNull();
    expect(metrics.client_overhead_ms).toBeNull();
  });

  it('gives a failed request no end-to-end latency', () => {
    const metrics = deriveRequestMetrics(completion({ endAt: 1500, error: { class: 'connect', message: 'refused' }, httpStatus: null }));
    expect(metrics.e2e_ms).toBeNull();
    expect(metrics.ttft_ms).toBeNull();
    expect(metrics.output_tokens).toBeNull();
  });
});

describe('sorted merging', () => {
  it('merges ascending parts into one ascending array', async () => {
    const { mergeSorted, sortedFinite } = await import('../../src/main/metrics/distribution');
    const merged = mergeSorted([sortedFinite([5, 1, 3]), sortedFinite([]), sortedFinite([2, 2, 9, Number.NaN])]);
    expect(Array.from(merged)).toEqual([1, 2, 2, 3, 5, 9]);
  });
});
