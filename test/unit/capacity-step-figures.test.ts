import { describe, expect, it } from 'vitest';
import { goodputWithinSlo, kneeOf, sloValue } from '../../src/main/experiments/kinds/capacity/protocol';
import type { CapacityStepResult } from '../../src/shared/contract/experiments';
import type { MeasuredRequest } from '../../src/shared/contract/measurement';
import { measuredRequest } from '../support/measured-request';

/** A hand-made request: sent (and scheduled) at t0, first token after 20 ms, done after 100 ms, 17 tokens at 5 ms each. */
function request(t0: number, fields: Partial<MeasuredRequest> = {}): MeasuredRequest {
  const e2e = fields.e2e_ms === undefined ? 100 : fields.e2e_ms;
  return measuredRequest(0, {
    scheduled_ms: t0,
    t0_ms: t0,
    end_ms: e2e === null ? null : t0 + e2e,
    ttft_ms: 20,
    tpot_ms: 5,
    e2e_ms: e2e,
    output_tokens: 17,
    ...fields,
  });
}

describe('what a capacity step judges', () => {
  it('counts TTFT and e2e from the scheduled time, so a late send cannot hide its wait', () => {
    const late = request(1_000, { scheduled_ms: 940 });
    expect(sloValue(late, 'ttft_ms')).toBe(80);
    expect(sloValue(late, 'e2e_ms')).toBe(160);
    // TPOT is a per-token pace: the wait before the send does not change it.
    expect(sloValue(late, 'tpot_ms')).toBe(5);
    // Closed loop: no schedule, the send is the start.
    expect(sloValue(request(1_000, { scheduled_ms: null }), 'ttft_ms')).toBe(20);
  });

  it('puts a failed request above every limit, and a one-token answer within any TPOT limit', () => {
    const failed = request(0, { error_class: 'http_500', ttft_ms: null, e2e_ms: null, tpot_ms: null });
    for (const metric of ['ttft_ms', 'tpot_ms', 'e2e_ms'] as const) expect(sloValue(failed, metric)).toBe(Infinity);
    expect(sloValue(request(0, { tpot_ms: null, output_tokens: 1 }), 'tpot_ms')).toBe(0);
    // Several tokens but no TPOT: the value is unknown, so it cannot be shown within the limit.
    expect(sloValue(request(0, { tpot_ms: null, output_tokens: 9 }), 'tpot_ms')).toBe(Infinity);
    // A stream that ended before its first token has no TTFT: above the limit, not within it.
    expect(sloValue(request(0, { ttft_ms: null }), 'ttft_ms')).toBe(Infinity);
  });

  it('goodput counts requests within every limit, from the scheduled time, over the measured window', () => {
    // Four requests sent 0, 250, 500, 750 ms, each done 250 ms later: a one-second window.
    const rows = [
      request(0, { e2e_ms: 250 }),
      request(250, { e2e_ms: 250 }),
      request(500, { e2e_ms: 250, scheduled_ms: 400 }), // 100 ms late: TTFT 120 from its schedule
      request(750, { e2e_ms: 250, ttft_ms: 60 }),
    ];
    expect(goodputWithinSlo(rows, ['ttft_ms'], { ttft_ms: 100 })).toBeCloseTo(3, 9);
    expect(goodputWithinSlo(rows, ['ttft_ms'], { ttft_ms: 50 })).toBeCloseTo(2, 9);
    // Every limit must hold: each request took 250 ms, over a 240 ms e2e limit.
    expect(goodputWithinSlo(rows, ['ttft_ms', 'e2e_ms'], { ttft_ms: 100, e2e_ms: 240 })).toBe(0);
    expect(goodputWithinSlo([], ['ttft_ms'], { ttft_ms: 100 })).toBeNull();
  });

  it('the knee is the lowest load whose percentile is at least twice the lowest load’s', () => {
    const step = (load: number, ttft: number | null) => ({ load, percentile_ms: { ttft_ms: ttft } }) as unknown as CapacityStepResult;
    expect(kneeOf([step(8, 35), step(1, 20), step(4, 39), step(16, 41)], 'ttft_ms')).toBe(16);
    expect(kneeOf([step(1, 20), step(2, 30)], 'ttft_ms')).toBeNull();
    expect(kneeOf([step(1, null), step(2, 10), step(4, 25)], 'ttft_ms')).toBe(4);
  });
});
