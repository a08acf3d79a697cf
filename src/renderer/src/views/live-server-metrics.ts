import type { ServerMetricsSample, TelemetryTick } from '../../../shared/contract/telemetry';

export interface LiveServerMetrics {
  /** [s on the run clock, generated tokens per second] between consecutive /metrics readings. */
  tokensPerS: [number, number][];
  /** [s, requests being decoded] and [s, requests waiting for a slot]. */
  processing: [number, number][];
  waiting: [number, number][];
}

/**
 * The server's own view of a run, from its /metrics counters: generation speed as the change of
 * the generated-token counter between readings, and the queue as its gauges. Ticks repeat a
 * reading until the next scrape, so each reading counts once; a counter that went backwards
 * (the server restarted) gives no rate for that step.
 */
export function liveServerMetrics(ticks: readonly TelemetryTick[]): LiveServerMetrics {
  const readings: ServerMetricsSample[] = [];
  for (const tick of ticks) {
    const sample = tick.serverMetrics;
    if (sample && sample.t !== readings.at(-1)?.t) readings.push(sample);
  }
  const result: LiveServerMetrics = { tokensPerS: [], processing: [], waiting: [] };
  readings.forEach((reading, index) => {
    const seconds = reading.t / 1000;
    if (reading.requestsProcessing !== null) result.processing.push([seconds, reading.requestsProcessing]);
    if (reading.requestsDeferred !== null) result.waiting.push([seconds, reading.requestsDeferred]);
    const previous = readings[index - 1];
    if (!previous || previous.predictedTokensTotal === null || reading.predictedTokensTotal === null) return;
    const tokens = reading.predictedTokensTotal - previous.predictedTokensTotal;
    const elapsed = (reading.t - previous.t) / 1000;
    if (tokens >= 0 && elapsed > 0) result.tokensPerS.push([seconds, tokens / elapsed]);
  });
  return result;
}
