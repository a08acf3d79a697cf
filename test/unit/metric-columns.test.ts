import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { distributionTable, throughputLine, turnTable } from '../../src/main/cli/summary-table';
import { formatMs, formatPercentile } from '../../src/main/cli/format';
import { runsListTable } from '../../src/main/cli/commands/runs';
import { experimentTable } from '../../src/main/cli/experiment-table';
import { reportHtml } from '../support/experiment-report';
import { RUN_COLUMNS } from '../../src/main/store/parquet-tables';
import type { RunListItem } from '../../src/shared/contract/results';
import type { ConditionResult, ExperimentResult } from '../../src/shared/contract/experiments';
import type { Distribution, RunSummary } from '../../src/shared/contract/runs';
import {
  columnLabel,
  columnsShownIn,
  distributionColumns,
  headerLabel,
  metricsShownIn,
  RUN_LIST_FIGURES,
  summaryRowName,
} from '../../src/shared/metric-columns';
import { METRIC_TABLE, type MetricDefinition, type Place } from '../../src/shared/metric-table';
import { SummaryTable } from '../../src/renderer/src/views/SummaryTable';
import { cdfChartOption } from '../../src/renderer/src/views/compare-charts';
import { CDF_METRICS } from '../../src/shared/contract/compare';
import { ConditionsTable } from '../../src/renderer/src/views/ExperimentResultView';
import { sharedProtocolFields } from '../support/experiment-result';
import { measuredRequest, summarizeCompleted } from '../support/measured-request';

/** An open-loop run with reasoning and function calls: its summary holds schedule latency, reasoning and calls as well as the usual metrics. */
function openLoopSummary(): RunSummary {
  const rows = Array.from({ length: 25 }, (_, seq) =>
    measuredRequest(seq, {
      scheduled_ms: seq * 100 - 1,
      ttft_ms: 10 + seq,
      ttfr_ms: 4,
      ttfa_ms: 9 + seq,
      ttfc_ms: 11 + seq,
      tool_call_ms: 20 + seq,
      tool_calls: 1,
      tool_calls_valid: 1,
      tool_argument_tokens: 6,
    }),
  );
  return summarizeCompleted(rows, { load: { mode: 'open', rate: 10 } });
}

const closedLoopSummary = () => summarizeCompleted(Array.from({ length: 25 }, (_, seq) => measuredRequest(seq)));

const perRequestIn = (place: Place) => metricsShownIn(place).filter(({ definition }) => definition.perRequest);
const ratesIn = (place: Place) => metricsShownIn(place).filter(({ definition }) => !definition.perRequest);
/** The text of every element with this tag, in order. */
const cells = (html: string, tag: string) => [...html.matchAll(new RegExp(`<${tag}[^>]*>([^<]*)</${tag}>`, 'g'))].map((match) => match[1]);

/** A distribution of n requests at one value; p95 withheld below 20 requests, as the summaries do. */
const distribution = (p50: number, n: number): Distribution => ({
  n,
  mean: p50,
  std: 0.1,
  p50,
  p90: p50,
  p95: n < 20 ? null : p50,
  p99: null,
  min: p50,
  max: p50,
  unsupported: n < 20 ? ['p95', 'p99'] : ['p99'],
});
/** An experiment condition of n requests. */
const condition = (name: string, n: number): ConditionResult => ({
  name,
  run_ids: [`${name}-run`],
  metrics: {
    ttft_ms: distribution(20, n),
    tpot_ms: distribution(3, n),
    itl_ms: distribution(3, n),
    e2e_ms: distribution(200, n),
    queue_ms: distribution(1, n),
    client_overhead_ms: distribution(0.2, n),
  },
  throughput: { requests_per_s: 2, output_tokens_per_s: 333.33 },
  accepted_rate: null,
  requests: { attempted: n, completed: n, failed: 0 },
  evidence: { cached_prompt_tokens: 0, prompt_tokens: 400, timings_cache_n_max: null, metrics_cached_prompt_tokens: null },
  contaminated: false,
  contamination_reason: null,
});

/**
 * Adds a metric to the table for one test, as a contributor would, and takes it out again (the
 * unit tests share one module graph per worker).
 */
function withMetric(name: string, definition: MetricDefinition, test: () => void): void {
  const table = METRIC_TABLE as unknown as Record<string, MetricDefinition>;
  table[name] = definition;
  try {
    test();
  } finally {
    delete table[name];
  }
}

describe('the metric table is the one list of run metrics each face reads', () => {
  it('gives the terminal run summary its rows, columns and throughput figures (shows.cli)', () => {
    const summary = openLoopSummary();
    const table = distributionTable(summary);
    expect(table[0]).toEqual(['metric', ...distributionColumns('cli')]);
    expect(table[0]).toEqual(['metric', 'n', 'mean', 'p50', 'p90', 'p95', 'p99', 'max']);
    expect(table.slice(1).map((row) => row[0])).toEqual(perRequestIn('cli').map(({ metric }) => summaryRowName(metric)));
    expect(table.slice(1).map((row) => row[0])).toContain('ttfr_ms (reasoning)');
    // A closed-loop run without reasoning has no schedule latency or reasoning to show: those rows are left out.
    expect(distributionTable(closedLoopSummary()).map((row) => row[0])).toEqual([
      'metric',
      'ttft_ms',
      'tpot_ms',
      'itl_ms',
      'e2e_ms',
      'queue_ms',
      'client_overhead_ms',
    ]);
    expect(throughputLine(summary)).toMatch(/^throughput: [\d.]+ req\/s, [\d.]+ output tok\/s, [\d.]+ total tok\/s over [\d.]+ ms$/);
    expect(ratesIn('cli').every(({ definition }) => throughputLine(summary).includes(definition.label))).toBe(true);
  });

  it('shows in the terminal a metric added to the table with shows.cli: a distribution as a row, a rate on the throughput line', () => {
    const summary = closedLoopSummary();
    const prefill: Distribution = { ...summary.metrics.ttft_ms, n: 7, p50: 3.25, mean: 4 };
    (summary.metrics as Record<string, Distribution>).prefill_ms = prefill;
    (summary.throughput as Record<string, number>).prompt_tokens_per_s = 123.45;
    withMetric(
      'prefill_ms',
      {
        label: 'prefill',
        unit: 'ms',
        higherIsBetter: false,
        perRequest: true,
        summary: { part: 'metrics', statistics: ['n', 'mean', 'p50'] },
        shows: { cli: ['n', 'p50'] },
        judged: {},
      },
      () =>
        withMetric(
          'prompt_tokens_per_s',
          {
            label: 'prompt tok/s',
            unit: 'tok/s',
            higherIsBetter: true,
            perRequest: false,
            summary: { part: 'throughput', statistics: ['rate'] },
            digits: 1,
            shows: { cli: ['rate'] },
            judged: {},
          },
          () => {
            const table = distributionTable(summary);
            expect(table.at(-1)).toEqual(['prefill_ms', '7', '', '3.25 ms', '', '', '', '']);
            expect(throughputLine(summary)).toContain('123.5 prompt tok/s over');
            // Not named for the app: its summary leaves it out.
            expect(renderToStaticMarkup(createElement(SummaryTable, { summary }))).not.toContain('prefill_ms');
          },
        ),
    );
    expect(distributionTable(summary).map((row) => row[0])).not.toContain('prefill_ms');
  });

  it('gives the app run summary its rows, columns and throughput figures (shows.ui)', () => {
    const summary = openLoopSummary();
    const html = renderToStaticMarkup(createElement(SummaryTable, { summary }));
    const table = /<table>[\s\S]*?<\/table>/.exec(html)![0];
    expect(cells(table, 'th')).toEqual([
      'Metric',
      ...distributionColumns('ui'),
      ...perRequestIn('ui').map(({ metric }) => summaryRowName(metric)),
    ]);
    // The app leaves schedule latency and reasoning to the terminal (shows.ui is not set for them).
    expect(cells(table, 'th')).not.toContain('ttft_from_schedule_ms');
    // A run whose requests offered tools shows its calls' rows and line.
    expect(cells(table, 'th')).toEqual(expect.arrayContaining(['ttfc_ms (first call chunk)', 'tool_call_ms (arguments parsed)']));
    expect(html).toContain('tool calls: 25 of 25 answers called a function; 25 of 25 calls valid (100.0 %)');
    expect(html).toMatch(/Throughput [\d.]+ req\/s, [\d.]+ output tok\/s · goodput/);
    withMetric('prefill_ms', { ...METRIC_TABLE.queue_ms, label: 'prefill', shows: { ui: ['n', 'p50'] } }, () => {
      (summary.metrics as Record<string, Distribution>).prefill_ms = summary.metrics.ttft_ms;
      const withPrefill = renderToStaticMarkup(createElement(SummaryTable, { summary }));
      expect(withPrefill).toContain(`<th>prefill_ms</th><td>25</td><td></td><td>${summary.metrics.ttft_ms.p50!.toFixed(1)} ms</td>`);
    });
  });

  it('gives the per-turn tables of a conversation run their latency columns, in the terminal and in the app (shows.perTurn)', () => {
    const summary = summarizeCompleted(Array.from({ length: 24 }, (_, seq) => measuredRequest(seq, { turn: (seq % 2) + 1 })));
    const turns = summary.turns!;
    const latencies = columnsShownIn('perTurn');
    expect(latencies.map(({ metric, statistic }) => columnLabel(metric, statistic))).toEqual(['TTFT p50', 'TTFT p90']);
    const [header, first] = turnTable(turns)
      .split('\n')
      .map((line) => line.trim().split(/\s{2,}/));
    expect(header).toEqual(['turn', 'requests', 'failed', 'TTFT p50', 'TTFT p90', 'prompt tokens', 'cached tokens', 'cached share']);
    expect(first!.slice(3, 5)).toEqual([formatMs(turns[0]!.ttft_ms.p50), formatPercentile(turns[0]!.ttft_ms, 'p90')]);
    const table = /<table data-testid="turn-table">[\s\S]*?<\/table>/.exec(
      renderToStaticMarkup(createElement(SummaryTable, { summary })),
    )![0];
    expect(cells(table, 'th').slice(0, 8)).toEqual([
      'Turn',
      'Requests',
      'Failed',
      ...latencies.map(({ metric, statistic }) => headerLabel(metric, statistic)),
      'Prompt tokens',
      'Cached tokens',
      'Cached share',
    ]);
  });

  it('gives the runs lists their metric columns, each with a stored figure (shows.runsList)', () => {
    const columns = columnsShownIn('runsList');
    expect(Object.keys(RUN_LIST_FIGURES).sort()).toEqual(columns.map(({ key }) => key).sort());
    expect(columns.map(({ metric, statistic }) => headerLabel(metric, statistic))).toEqual(['TTFT p50', 'Output tok/s']);
    const run: RunListItem = {
      runId: '0123456789abcdef',
      startedAt: '2026-11-30T16:05:09.123Z',
      status: 'completed',
      statusReason: null,
      model: 'demo:q8_0',
      quantization: 'Q8_0',
      engine: 'llama.cpp',
      workload: 'chat-short',
      kind: 'bench',
      requests: 12,
      ttftP50: 12.345,
      outputTokensPerS: 456.78,
      importedFrom: null,
    };
    const [header, row] = runsListTable([run]).split('\n');
    expect(header!.split(/\s{2,}/)).toEqual(['run', 'started', 'status', 'model', 'workload', 'requests', 'TTFT p50', 'output tok/s']);
    expect(row!.split(/\s{2,}/).slice(-2)).toEqual(['12.3 ms', '456.8 tok/s']);
    expect(
      runsListTable([{ ...run, ttftP50: null, outputTokensPerS: null }])
        .split('\n')[1]!
        .split(/\s{2,}/)
        .slice(-2),
    ).toEqual(['—', '—']);
  });

  it('gives Compare only statistics it can put an interval on, and latencies whose sorted columns the store keeps (shows.compare)', () => {
    for (const { metric, statistic, definition } of columnsShownIn('compare'))
      if (definition.perRequest) {
        expect(['p50', 'p95', 'mean'], `${metric} ${statistic}`).toContain(statistic);
        expect(['ttft_ms', 'tpot_ms', 'e2e_ms']).toContain(metric);
      }
    expect(columnsShownIn('compare').map(({ metric, statistic }) => columnLabel(metric, statistic))).toEqual([
      'TTFT p50',
      'TTFT p95',
      'TPOT p50',
      'TPOT p95',
      'E2E p50',
      'E2E p95',
      'output tok/s',
      'inputs/s',
      'documents/s',
    ]);
    // A CDF per latency Compare shows, keyed and titled from the table.
    expect(CDF_METRICS.map((metric) => cdfChartOption([], metric).title.text)).toEqual(['CDF of TTFT', 'CDF of TPOT', 'CDF of E2E']);
  });

  it('gives the experiment report its conditions columns and bar charts (shows.report, shows.reportChart)', async () => {
    const html = await reportHtml({
      experiment_id: '0123456789abcdef',
      kind: 'sweep',
      status: 'completed',
      protocol: sharedProtocolFields('sweep'),
      conditions: [condition('a', 40), condition('b', 10)],
      verdicts: [],
      recommendation: { choice: null, reason: 'none', excluded: [] },
    } as unknown as ExperimentResult);
    const headers = columnsShownIn('report').map(
      ({ metric, statistic, definition }) =>
        `<th>${headerLabel(metric, statistic)}${definition.perRequest ? ` (${definition.unit})` : ''}</th>`,
    );
    expect(headers).toEqual([
      '<th>TTFT p50 (ms)</th>',
      '<th>TTFT p95 (ms)</th>',
      '<th>TPOT p50 (ms)</th>',
      '<th>E2E p50 (ms)</th>',
      '<th>Output tok/s</th>',
    ]);
    expect(html).toContain(`<th>Failed</th>${headers.join('')}<th>Accepted</th>`);
    expect(html).toContain('<td>40</td><td>0</td><td>20.00</td><td>20.00</td><td>3.00</td><td>200.00</td><td>333.3</td>');
    expect(html).toContain('<td>10</td><td>0</td><td>20.00</td><td>n too small</td><td>3.00</td><td>200.00</td><td>333.3</td>');
    const charts = [...html.matchAll(/<svg[^>]*aria-label="([^"]*)"/g)].map((match) => match[1]);
    expect(charts.slice(0, 3)).toEqual(columnsShownIn('reportChart').map(({ metric, statistic }) => headerLabel(metric, statistic)));
    expect(charts.slice(0, 3)).toEqual(['TTFT p50', 'TPOT p50', 'Output tok/s']);
  });

  it("gives every kind's conditions table its metric columns, in the terminal and in the app (shows.conditions)", () => {
    const columns = columnsShownIn('conditions');
    expect(columns.map(({ metric, statistic }) => columnLabel(metric, statistic))).toEqual([
      'TTFT p50',
      'TTFT p95',
      'TPOT p50',
      'output tok/s',
    ]);
    const experiment = (kind: ExperimentResult['kind'], extra: Partial<ExperimentResult> = {}) =>
      ({
        experiment_id: '0123456789abcdef',
        kind,
        status: 'completed',
        protocol: sharedProtocolFields(kind),
        conditions: [condition('a', 40), condition('b', 10)],
        verdicts: [],
        recommendation: { choice: null, reason: 'none', excluded: [] },
        ...extra,
      }) as unknown as ExperimentResult;
    const agreement = { items: 2, mean: 1, exact: 1 };
    const speculative = experiment('speculative', {
      greedy_equivalence: {
        rule: 'identical greedy tokens',
        items: 2,
        noise_floor: agreement,
        floor_mismatches: [],
        settings: [{ name: 'b', agreement, mismatches: [], beyond_floor: [], equivalent: true }],
      } as unknown as ExperimentResult['greedy_equivalence'],
    });
    // The terminal: the generic table (warm/cold), and the sweep's and speculative decoding's own tables.
    for (const result of [experiment('warmcold'), experiment('sweep'), speculative]) {
      const lines = experimentTable(result).split('\n');
      const header = lines[0]!.split(/\s{2,}/);
      const first = header.indexOf('TTFT p50');
      expect(header.slice(first, first + 4), result.kind).toEqual(['TTFT p50', 'TTFT p95', 'TPOT p50', 'output tok/s']);
      const cellsOf = (line: string) => line.split(/\s{2,}/).slice(first, first + 4);
      expect(cellsOf(lines[1]!), result.kind).toEqual(['20.0 ms', '20.0 ms', '3.00 ms', '333.3']);
      // Ten requests cannot support a p95: said so, not printed as a figure.
      expect(cellsOf(lines[2]!), result.kind).toEqual(['20.0 ms', 'n too small', '3.00 ms', '333.3']);
    }
    // The app's conditions table, with the rate's unit in its cells.
    const html = renderToStaticMarkup(createElement(ConditionsTable, { result: experiment('warmcold') }));
    const headers = cells(html, 'th');
    expect(headers.slice(1, 5)).toEqual(['TTFT p50', 'TTFT p95', 'TPOT p50', 'Output tok/s']);
    expect(cells(html, 'td').slice(0, 4)).toEqual(['20.0 ms', '20.0 ms', '3.00 ms', '333.3 tok/s']);
    expect(cells(html, 'td')).toContain('n too small');
  });

  it('names the runs.parquet headline columns from the table, as the file format has them (shows.parquet)', () => {
    const names = RUN_COLUMNS.map((column) => column.name);
    const headline = names.slice(names.indexOf('requests_failed') + 1, names.indexOf('engine_json'));
    expect(headline).toEqual(
      columnsShownIn('parquet').map(({ metric, statistic }) =>
        statistic === 'rate' ? metric : `${metric.replace(/_ms$/, '')}_${statistic}_ms`,
      ),
    );
  });
});
