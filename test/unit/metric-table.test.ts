import { imagesSummary } from '../../src/main/metrics/images-summary';
import { describe, expect, it } from 'vitest';
import { CHECK_LATENCIES } from '../../src/shared/contract/check';
import { HISTORY_METRICS, readMetricSpec } from '../../src/shared/contract/history';
import { METRIC_NAMES, SCHEDULE_METRIC_NAMES } from '../../src/shared/contract/runs';
import {
  DISTRIBUTION_STATISTICS,
  METRIC_TABLE,
  metricDefinition,
  type MetricDefinition,
  type TableMetric,
} from '../../src/shared/metric-table';
import { metricDistribution, metricFigure } from '../../src/shared/metric-columns';
import { measuredRequest, summarizeCompleted } from '../support/measured-request';
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

  it('declares each metric whole: how it is summarized, where the summary holds it, and only statistics it has wherever it shows', () => {
    // Open loop, with reasoning and function calls, so the summary holds every part a metric can live in; an
    // embeddings and a reranking run's own parts are added, as no one run holds both, and a run's pictures (from a server's log).
    const vectors = { requests: 4, inputs: 8, inputs_per_request_mean: 2, inputs_per_s: 16, input_tokens: 80, input_tokens_per_s: 160 };
    const summary = {
      ...summarizeCompleted(
        Array.from({ length: 25 }, (_, seq) =>
          measuredRequest(seq, {
            scheduled_ms: seq * 100 - 1,
            ttfr_ms: 4,
            ttfa_ms: 9,
            ttfc_ms: 10,
            tool_call_ms: 14,
            tool_calls: 1,
            tool_calls_valid: 1,
          }),
        ),
        { load: { mode: 'open', rate: 10 } },
      ),
      embeddings: vectors,
      rerank: vectors,
      images: imagesSummary({ encodesMs: [20, 30], images: [{ tokens: 16, decodeMs: 5 }] }),
    };
    for (const [metric, definition] of Object.entries(METRIC_TABLE) as [TableMetric, MetricDefinition][]) {
      expect(definition.summary.statistics, metric).toEqual(definition.perRequest ? DISTRIBUTION_STATISTICS : ['rate']);
      for (const [place, statistics] of Object.entries(definition.shows))
        for (const statistic of statistics) expect(definition.summary.statistics, `${metric} in ${place}`).toContain(statistic);
      if (definition.perRequest) {
        // Every face prints a distribution in milliseconds and heads it "<label> <statistic> (ms)".
        expect(definition.unit, metric).toBe('ms');
        expect(metricDistribution(summary, metric), metric).toMatchObject({ n: expect.any(Number) });
      } else {
        // A rate is one figure under its label alone, so the label names the unit.
        expect(definition.label.endsWith(definition.unit), metric).toBe(true);
        expect(definition.digits, metric).toEqual(expect.any(Number));
        expect(metricFigure(summary, metric, 'rate'), metric).toEqual(expect.any(Number));
      }
    }
  });
});
