import { describe, expect, it } from 'vitest';
import { historyChartOption } from '../../src/renderer/src/views/history-chart';
import { historyBuild, tpotHistory } from '../support/metric-history';

const build = historyBuild;

describe('historyChartOption', () => {
  it('puts builds along x in order, a dot per run with a value, the means joined, and an error bar where there is an interval', () => {
    const history = tpotHistory([build('old', [10, 10, null], [5, 15]), build('new', [20], null)]);
    const option = historyChartOption(history, history.configurations[0]!) as {
      xAxis: { data: string[] };
      series: { name: string; data: unknown[] }[];
    };
    expect(option.xAxis.data).toEqual(['old', 'new']);
    const [runs, means, bars] = option.series;
    expect(runs!.data).toEqual([
      { value: [0, 10], name: 'old-run-', symbolOffset: [-3.5, 0] },
      { value: [0, 10], name: 'old-run-', symbolOffset: [3.5, 0] },
      { value: [1, 20], name: 'new-run-', symbolOffset: [0, 0] },
    ]);
    expect(means!.data).toEqual([
      [0, 10],
      [1, 20],
    ]);
    expect(bars!.data).toEqual([[0, 5, 15]]);
  });
});
