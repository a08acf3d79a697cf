import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/main/core/paths';
import { VERDICT_METRICS } from '../../src/main/experiments/condition-summary';
import { CHECK_LATENCIES, CHECK_RATES } from '../../src/shared/contract/check';
import { CDF_METRICS } from '../../src/shared/contract/compare';
import { HISTORY_METRIC_SPECS, HISTORY_METRICS } from '../../src/shared/contract/history';
import { METRIC_NAMES, SCHEDULE_METRIC_NAMES, SLO_METRICS } from '../../src/shared/contract/runs';
import { SloSpecSchema } from '../../src/shared/contract/schema-parts';
import {
  judgedStatistics,
  METRIC_TABLE,
  metricsInPart,
  metricsJudgedIn,
  type MetricDefinition,
  type TableMetric,
} from '../../src/shared/metric-table';
import { findMetricLists } from '../support/metric-lists';

/**
 * The metric table is the one list of metrics: what each face shows and what is judged (verdicts,
 * the gate, histories, SLOs, Compare's CDFs) are read from it. A list of metric names written
 * anywhere else is one a new metric silently misses.
 */
const root = projectRoot();
const TABLE_FILE = path.join('src', 'shared', 'metric-table.ts');
const METRICS = Object.keys(METRIC_TABLE);

function sourceFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) =>
      entry.isDirectory()
        ? sourceFiles(path.join(dir, entry.name))
        : /\.(ts|tsx|mts|cts)$/.test(entry.name)
          ? [path.join(dir, entry.name)]
          : [],
    );
}

describe('no metric-name list is written outside the metric table', () => {
  it('finds none in src/ but the table itself', () => {
    const found = sourceFiles(path.join(root, 'src'))
      .map((file) => path.relative(root, file))
      .filter((file) => file !== TABLE_FILE)
      .flatMap((file) =>
        findMetricLists(fs.readFileSync(path.join(root, file), 'utf8'), METRICS).map(({ line, text }) => `${file}:${line}: ${text}`),
      );
    expect(found, 'derive these lists from src/shared/metric-table.ts (metricsJudgedIn, judgedStatistics, metricsInPart)').toEqual([]);
  });

  it('recognizes a list however it is written, and leaves lists of other names alone', () => {
    const source = [
      "const a = ['ttft_ms', 'tpot_ms'];",
      'const b = [ "e2e_ms" ,\n  `ttft_ms` ] as const;',
      "const c = [{ key: 'ttft_ms', statistic: 'p50' }, { key: 'tpot_ms', statistic: 'p95' }];",
      "type D = 'ttft_ms' | 'e2e_ms' | 'tpot_ms';",
      "if (!['ttft_ms', 'tpot_ms', 'e2e_ms'].includes(key)) fail();",
      // Not lists of metrics: comments, one name, names mixed with other columns, a regular expression with quotes.
      "// ['ttft_ms', 'tpot_ms']",
      "/* type E = 'ttft_ms' | 'tpot_ms'; */",
      "const f = ['ttft_ms'];",
      "const g = ['seq', 'ttft_ms', 'tpot_ms'];",
      "type H = Pick<Row, 'warmup' | 'ttft_ms' | 'tpot_ms'>;",
      'const i = /[\'"]/.test(x) ? METRIC_TABLE.ttft_ms : null;',
      "<p>the server's cache, then <code>ttft_ms</code> and <code>tpot_ms</code></p>",
    ].join('\n');
    expect(findMetricLists(source, METRICS).map(({ line, names }) => [line, names])).toEqual([
      [1, ['ttft_ms', 'tpot_ms']],
      [2, ['e2e_ms', 'ttft_ms']],
      [4, ['ttft_ms', 'tpot_ms']],
      [5, ['ttft_ms', 'e2e_ms', 'tpot_ms']],
      [6, ['ttft_ms', 'tpot_ms', 'e2e_ms']],
    ]);
  });
});

describe('every judged list is derived from the metric table', () => {
  // A copy of the table with one metric more, judged everywhere: each derivation must pick it up.
  const prefill: MetricDefinition = {
    label: 'prefill',
    unit: 'ms',
    higherIsBetter: false,
    perRequest: true,
    summary: { part: 'metrics', statistics: ['n', 'p50', 'p95'] },
    shows: { cli: ['p50'] },
    judged: { verdict: ['p50'], speed: true, gate: ['p95'], history: ['p50'], slo: true },
  };
  const extended: Record<string, MetricDefinition> = { ...METRIC_TABLE, prefill_ms: prefill };

  it('reaches the verdicts, the gate, histories, speed and SLOs once the table names it there', () => {
    expect(judgedStatistics('verdict', extended)).toEqual([
      ...judgedStatistics('verdict', METRIC_TABLE),
      { metric: 'prefill_ms', statistic: 'p50' },
    ]);
    expect(judgedStatistics('gate', extended)).toContainEqual({ metric: 'prefill_ms', statistic: 'p95' });
    expect(judgedStatistics('history', extended)).toContainEqual({ metric: 'prefill_ms', statistic: 'p50' });
    for (const place of ['verdict', 'speed', 'gate', 'history', 'slo'] as const)
      expect(metricsJudgedIn(place, extended).at(-1), place).toBe('prefill_ms');
    expect(metricsInPart('metrics', extended).at(-1)).toBe('prefill_ms');
    // Named nowhere, it reaches nothing.
    const unjudged = { ...METRIC_TABLE, prefill_ms: { ...prefill, judged: {} } };
    for (const place of ['verdict', 'speed', 'gate', 'history', 'slo'] as const)
      expect(metricsJudgedIn(place, unjudged), place).not.toContain('prefill_ms');
  });

  it('judges each metric only on what its place can compute for it', () => {
    for (const [metric, { perRequest, unit, judged }] of Object.entries(METRIC_TABLE) as [TableMetric, MetricDefinition][]) {
      // A rate is one figure per window or run: judged on the mean of its windows, and a history takes it as it is.
      for (const statistic of [...(judged.verdict ?? []), ...(judged.gate ?? [])])
        if (!perRequest) expect(statistic, `${metric} (a rate)`).toBe('mean');
      for (const statistic of judged.history ?? []) expect(statistic === 'rate', `${metric} history ${statistic}`).toBe(!perRequest);
      // An SLO limits a request's latency; speed is read from verdicts, so it needs one.
      if (judged.slo) expect([perRequest, unit], `${metric} slo`).toEqual([true, 'ms']);
      if (judged.speed) expect(judged.verdict, `${metric} speed`).toBeDefined();
    }
  });

  it('gives each place exactly what the table says of it', () => {
    expect(VERDICT_METRICS).toEqual(judgedStatistics('verdict', METRIC_TABLE));
    expect(VERDICT_METRICS).toEqual([
      { metric: 'ttft_ms', statistic: 'p50' },
      { metric: 'ttft_ms', statistic: 'p95' },
      { metric: 'tpot_ms', statistic: 'p50' },
      { metric: 'tpot_ms', statistic: 'p95' },
      { metric: 'output_tokens_per_s', statistic: 'mean' },
    ]);
    expect([...CHECK_LATENCIES, ...CHECK_RATES]).toEqual(metricsJudgedIn('gate', METRIC_TABLE));
    expect(HISTORY_METRICS).toEqual(metricsJudgedIn('history', METRIC_TABLE));
    expect(HISTORY_METRIC_SPECS).toEqual([
      'ttft_ms:p50',
      'ttft_ms:p95',
      'tpot_ms:p50',
      'tpot_ms:p95',
      'e2e_ms:p50',
      'e2e_ms:p95',
      'output_tokens_per_s',
    ]);
    expect(SLO_METRICS).toEqual(metricsJudgedIn('slo', METRIC_TABLE));
    expect(Object.keys(SloSpecSchema.properties)).toEqual(SLO_METRICS);
    expect(METRIC_NAMES).toEqual(metricsInPart('metrics', METRIC_TABLE));
    expect(SCHEDULE_METRIC_NAMES).toEqual(metricsInPart('schedule_latency', METRIC_TABLE));
    expect(CDF_METRICS).toEqual(
      (Object.keys(METRIC_TABLE) as TableMetric[]).filter(
        (metric) => METRIC_TABLE[metric].perRequest && 'compare' in METRIC_TABLE[metric].shows,
      ),
    );
  });
});
