import { describe, expect, it } from 'vitest';
import { CHECK_LATENCIES } from '../../src/shared/contract/check';
import { HISTORY_METRICS, readMetricSpec } from '../../src/shared/contract/history';
import { METRIC_NAMES, SCHEDULE_METRIC_NAMES } from '../../src/shared/contract/runs';
import { METRIC_TABLE, metricDefinition } from '../../src/shared/metric-table';
import { verdictUnit } from '../../src/shared/verdict-units';
import { parseCheckMetrics } from '../../src/main/cli/check-flags';

describe('the metric table', () => {
  it('holds every metric a summary, a history or the gate names', () => {
    for (const metric of [...METRIC_NAMES, ...SCHEDULE_METRIC_NAMES, ...HISTORY_METRICS, ...CHECK_LATENCIES])
      expect(Object.keys(METRIC_TABLE), metric).toContain(metric);
  });

  it('reads a metric however verdicts, histories and the gate write it', () => {
    expect(metricDefinition('ttft_ms')).toMatchObject({ unit: 'ms', higherIsBetter: false, perRequest: true });
    expect(metricDefinition('ttft_ms p95')).toBe(METRIC_TABLE.ttft_ms);
    expect(metricDefinition('tpot_ms:p50')).toBe(METRIC_TABLE.tpot_ms);
    expect(metricDefinition('output_tokens_per_s mean')).toMatchObject({ unit: 'tok/s', higherIsBetter: true, perRequest: false });
    expect(metricDefinition('kld')).toBeNull();
    expect(metricDefinition('constructor')).toBeNull();
    expect([verdictUnit('output_tokens_per_s mean'), verdictUnit('e2e_ms p50'), verdictUnit('token agreement')]).toEqual([
      'tok/s',
      'ms',
      '',
    ]);
  });

  it('decides which metrics take a statistic: a rate is one figure per run', () => {
    expect(readMetricSpec('output_tokens_per_s')).toEqual({ metric: 'output_tokens_per_s', statistic: null });
    expect(readMetricSpec('output_tokens_per_s:p50')).toBeNull();
    expect(readMetricSpec('tpot_ms')).toBeNull();
    expect(parseCheckMetrics('output_tokens_per_s,ttft_ms:p95')).toEqual([
      { metric: 'output_tokens_per_s', statistic: 'mean' },
      { metric: 'ttft_ms', statistic: 'p95' },
    ]);
    expect(() => parseCheckMetrics('output_tokens_per_s:p99')).toThrow('output_tokens_per_s is one rate per run; drop ":p99"');
    expect(() => parseCheckMetrics('requests_per_s')).toThrow('the gate judges output_tokens_per_s among the rates, not requests_per_s');
  });
});
