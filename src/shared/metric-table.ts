/**
 * The metrics verdicts, histories, the regression gate and tables name: each one's unit, which
 * way is better, and whether it is measured per request (so it has percentiles) or is one rate
 * per run or window (a mean only). Anything that needs one of these facts reads it here rather
 * than from the metric's name.
 */
export interface MetricDefinition {
  label: string;
  unit: 'ms' | 'tok/s' | 'req/s';
  higherIsBetter: boolean;
  perRequest: boolean;
}

const latency = (label: string): MetricDefinition => ({ label, unit: 'ms', higherIsBetter: false, perRequest: true });

export const METRIC_TABLE = {
  ttft_ms: latency('TTFT'),
  tpot_ms: latency('TPOT'),
  itl_ms: latency('ITL'),
  e2e_ms: latency('E2E'),
  queue_ms: latency('queue'),
  client_overhead_ms: latency('client overhead'),
  ttft_from_schedule_ms: latency('TTFT from schedule'),
  e2e_from_schedule_ms: latency('E2E from schedule'),
  output_tokens_per_s: { label: 'output tok/s', unit: 'tok/s', higherIsBetter: true, perRequest: false },
  requests_per_s: { label: 'requests/s', unit: 'req/s', higherIsBetter: true, perRequest: false },
} as const satisfies Record<string, MetricDefinition>;

export type TableMetric = keyof typeof METRIC_TABLE;

/**
 * A metric as verdicts, histories and the gate write it, with or without its statistic
 * (`tpot_ms`, `ttft_ms p95`, `ttft_ms:p95`, `output_tokens_per_s mean`); null for a name the
 * table does not hold.
 */
export function metricDefinition(name: string): MetricDefinition | null {
  const metric = name.split(/[\s:]/)[0]!;
  return Object.hasOwn(METRIC_TABLE, metric) ? METRIC_TABLE[metric as TableMetric] : null;
}
