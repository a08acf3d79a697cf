import { describe, expect, it } from 'vitest';
import type { ServerMetricsSample, TelemetryTick } from '../../src/shared/contract/telemetry';
import { liveServerMetrics } from '../../src/renderer/src/views/live-server-metrics';

const reading = (t: number, predicted: number | null, processing: number | null = 1, deferred: number | null = 0): ServerMetricsSample => ({
  t,
  promptTokensTotal: null,
  cachedPromptTokensTotal: null,
  predictedTokensTotal: predicted,
  requestsProcessing: processing,
  requestsDeferred: deferred,
});
const tick = (t: number, serverMetrics: ServerMetricsSample | null): TelemetryTick => ({
  t,
  gpus: [],
  serverProcess: null,
  serverVramMib: null,
  serverMetrics,
});

describe('live server metrics from /metrics readings', () => {
  it('rates generated tokens between distinct readings, counting a reading repeated by later ticks once', () => {
    const first = reading(1000, 100, 2, 0);
    const second = reading(2000, 150, 2, 3);
    const third = reading(2500, 200, 1, 1);
    const live = liveServerMetrics([
      tick(1000, first),
      tick(1250, first),
      tick(1500, first),
      tick(2000, second),
      tick(2250, second),
      tick(2500, third),
    ]);
    expect(live.tokensPerS).toEqual([
      [2, 50],
      [2.5, 100],
    ]);
    expect(live.processing).toEqual([
      [1, 2],
      [2, 2],
      [2.5, 1],
    ]);
    expect(live.waiting).toEqual([
      [1, 0],
      [2, 3],
      [2.5, 1],
    ]);
  });

  it('gives no rate across a counter reset or a missing counter, and nothing without /metrics', () => {
    const live = liveServerMetrics([
      tick(0, reading(0, 500)),
      tick(1000, reading(1000, 20)),
      tick(2000, reading(2000, null, null, null)),
      tick(3000, reading(3000, 80)),
    ]);
    expect(live.tokensPerS).toEqual([]);
    expect(live.processing).toEqual([
      [0, 1],
      [1, 1],
      [3, 1],
    ]);
    expect(liveServerMetrics([tick(0, null), { t: 1, gpus: [], serverProcess: null, serverVramMib: null }])).toEqual({
      tokensPerS: [],
      processing: [],
      waiting: [],
    });
  });
});
