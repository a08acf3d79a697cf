import { describe, expect, it } from 'vitest';
import { bunchedDelivery, cameBunched } from '../../src/main/metrics/bunched-delivery';
import { measuredRequest as row, summarizeCompleted } from '../support/measured-request';

describe('bunched token delivery', () => {
  it('compares the client pace with the server’s own decode step, and judges without it only against a floor', () => {
    // 1.43 ms per step on the server (700 tokens/s): 1.4 ms seen by the client is streaming,
    // 0.005 ms (captured on this project's 2-core CI: a whole answer in one read) is not.
    expect(cameBunched(row(0, { tpot_ms: 1.4, decode_tokens_per_s: 700 }))).toBe(false);
    expect(cameBunched(row(0, { tpot_ms: 0.005, decode_tokens_per_s: 700 }))).toBe(true);
    // Half held back: 0.6 ms against a 1.43 ms step is under half.
    expect(cameBunched(row(0, { tpot_ms: 0.6, decode_tokens_per_s: 700 }))).toBe(true);
    expect(cameBunched(row(0, { tpot_ms: 0.9, decode_tokens_per_s: 700 }))).toBe(false);
    // A server without timings (vLLM, an endpoint): only a pace no server decodes at.
    expect(cameBunched(row(0, { tpot_ms: 0.05 }))).toBe(true);
    expect(cameBunched(row(0, { tpot_ms: 0.6 }))).toBe(false);
    expect(cameBunched(row(0, { tpot_ms: 0.05, decode_tokens_per_s: null }))).toBe(true);
  });

  it('cannot tell for a failed request, one without TPOT, or fewer than three tokens', () => {
    expect(cameBunched(row(0, { tpot_ms: 0.001, error_class: 'timeout' }))).toBeNull();
    expect(cameBunched(row(0, { tpot_ms: null }))).toBeNull();
    expect(cameBunched(row(0, { tpot_ms: 0.001, output_tokens: 2 }))).toBeNull();
    expect(cameBunched(row(0, { tpot_ms: 0.001, output_tokens: null }))).toBeNull();
  });

  it('counts the bunched requests among those it could judge and warns only when there are some', () => {
    const streamed = bunchedDelivery([row(0, { tpot_ms: 1.4, decode_tokens_per_s: 700 }), row(1, { tpot_ms: null })]);
    expect(streamed).toEqual({ judged_requests: 1, bunched_requests: 0, warning: null });
    const mixed = bunchedDelivery([
      row(0, { tpot_ms: 1.4, decode_tokens_per_s: 700 }),
      row(1, { tpot_ms: 0.005, decode_tokens_per_s: 700 }),
      row(2, { tpot_ms: 0.004, decode_tokens_per_s: 700 }),
      row(3, { tpot_ms: 0.004, error_class: 'http' }),
    ]);
    expect(mixed).toMatchObject({ judged_requests: 3, bunched_requests: 2 });
    expect(mixed.warning).toMatch(/^BUNCHED TOKENS: 2 of 3 requests/);
    expect(mixed.warning).toMatch(/--set threads=N/);
  });

  it('is part of the run summary, warmup left out', () => {
    const summary = summarizeCompleted([row(0, { warmup: true, tpot_ms: 0.001 }), row(1, { tpot_ms: 0.001 }), row(2)]);
    expect(summary.delivery).toMatchObject({ judged_requests: 2, bunched_requests: 1 });
  });
});
