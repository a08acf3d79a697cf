import { describe, expect, it } from 'vitest';
import type { HistoryBuild, MetricHistory } from '../../src/shared/contract/history';
import { historyChartOption } from '../../src/renderer/src/views/history-chart';

const build = (label: string, values: (number | null)[], interval: [number, number] | null): HistoryBuild => ({
  build: label,
  label,
  commit: label,
  backend: 'cpu',
  firstStartedAt: '2026-01-01T00:00:00Z',
  runs: values.map((value, index) => ({
    runId: `${label}-run-${index}`,
    startedAt: '2026-01-01T00:00:00Z',
    value,
    requests: 3,
    note: null,
  })),
  mean: values[0] ?? null,
  interval,
  intervalNote: interval ? null : 'one run: an interval needs two or more',
  changePercent: null,
});

describe('historyChartOption', () => {
  it('puts builds along x in order, a dot per run with a value, the means joined, and an error bar where there is an interval', () => {
    const history: MetricHistory = {
      metric: 'tpot_ms',
      statistic: 'p50',
      unit: 'ms',
      higherIsBetter: false,
      notes: [],
      configurations: [
        {
          key: 'k',
          model: { sha256: null, ref: null },
          workload: { name: null, revision: null },
          load: 'closed, concurrency 1',
          profileName: null,
          builds: [build('old', [10, 10, null], [5, 15]), build('new', [20], null)],
        },
      ],
    };
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
