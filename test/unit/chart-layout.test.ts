import { describe, expect, it } from 'vitest';
import type { ComparedRun } from '../../src/shared/contract/compare';
import type { CapacityResult, ExperimentResult } from '../../src/shared/contract/experiments';
import { capacityChartOption } from '../../src/renderer/src/experiment-kinds/capacity-chart';
import { quantTradeoffOption } from '../../src/renderer/src/experiment-kinds/quant-tradeoff';
import { cdfChartOption, vramChartOption } from '../../src/renderer/src/views/compare-charts';
import { tradeOffOption } from '../../src/renderer/src/views/compare-trade-off';
import { historyChartOption } from '../../src/renderer/src/views/history-chart';
import { serverMetricsChartOption, telemetryChartOption, ttftChartOption } from '../../src/renderer/src/views/run-live-charts';
import { historyBuild, tpotHistory } from '../support/metric-history';

// Where ECharts draws a chart's parts is fixed by the options: a title is drawn in the top band
// (its 13 px text and padding end near 28 px), so a legend placed there covers it, as Compare's
// CDF, the capacity chart and History's once did. Constructed inputs, the smallest each builder takes.
const TITLE_BAND_PX = 36;

interface Placed {
  title?: { text?: string };
  legend?: { top?: number | string; bottom?: number | string };
}

const run = (label: string): ComparedRun =>
  ({
    label,
    cdf: { ttft_ms: [10, 20], tpot_ms: [1, 2], e2e_ms: [30, 40] },
    vramTimeline: [[0, 100]],
    ttftP95Ms: 20,
    outputTokensPerS: 40,
  }) as unknown as ComparedRun;

const capacity = (by: CapacityResult['by']): CapacityResult =>
  ({
    by,
    percentile: 90,
    slo: { ttft_ms: 100 },
    capacity: 2,
    steps: [1, 2].map((load) => ({ load, percentile_ms: { ttft_ms: 20 * load }, goodput_requests_per_s: 5, throughput_requests_per_s: 5 })),
  }) as unknown as CapacityResult;

const quant = {
  kind: 'quant',
  conditions: [
    ['f16', 3.1, 0, 87],
    ['q4_k_m', 1.8, 5e-5, 30],
  ].map(([name, tpot, kld, mib]) => ({
    name,
    metrics: { tpot_ms: { p50: tpot } },
    kld_mean: kld,
    file_bytes: (mib as number) * 2 ** 20,
    vram: null,
    token_agreement: null,
  })),
  recommendation: { choice: 'q4_k_m', reason: '', excluded: [], gates: [] },
} as unknown as ExperimentResult;

function charts(): [string, Placed][] {
  const history = tpotHistory([historyBuild('b1', [10, 12], null)]);
  return [
    ['Compare CDF', cdfChartOption([run('a'), run('b')], 'ttft_ms')],
    ['Compare memory', vramChartOption([run('a'), run('b')])],
    ['Compare trade-off', tradeOffOption([run('a')])],
    ['capacity', capacityChartOption(capacity('concurrency')) as Placed],
    ['quantization trade-off', quantTradeoffOption(quant) as Placed],
    ['History', historyChartOption(history, history.configurations[0]!) as Placed],
    ['live TTFT', ttftChartOption([[0, 10]], { ttft_ms: 100 } as never) as Placed],
    ['live server metrics', serverMetricsChartOption({ tokensPerS: [], processing: [], waiting: [] } as never) as Placed],
    ['live telemetry', telemetryChartOption([], []) as Placed],
  ];
}

describe('chart layout', () => {
  it("keeps every legend out of its title's band", () => {
    for (const [name, option] of charts()) {
      if (!option.title?.text || !option.legend) continue;
      const { top, bottom } = option.legend;
      if (bottom !== undefined) continue;
      expect(typeof top === 'number' && top >= TITLE_BAND_PX, `${name}: legend at top ${String(top)}`).toBe(true);
    }
  });

  it('gives the quantization bubbles room: axis names along their axes, headroom past the extreme points, no negative quality loss', () => {
    const option = quantTradeoffOption(quant) as {
      xAxis: { nameLocation?: string; boundaryGap?: string[] };
      yAxis: { nameLocation?: string; boundaryGap?: string[]; min?: number };
    };
    expect(option.yAxis.nameLocation).toBe('middle');
    expect(option.xAxis.nameLocation).toBe('middle');
    expect(parseFloat(option.xAxis.boundaryGap![0]!)).toBeGreaterThan(0);
    expect(parseFloat(option.xAxis.boundaryGap![1]!)).toBeGreaterThan(0);
    expect(parseFloat(option.yAxis.boundaryGap![1]!)).toBeGreaterThan(0);
    expect(option.yAxis.min).toBe(0);
  });

  it('ticks whole loads on the capacity chart, and any rate on a rate search', () => {
    expect((capacityChartOption(capacity('concurrency')) as { xAxis: { minInterval?: number } }).xAxis.minInterval).toBe(1);
    expect((capacityChartOption(capacity('users')) as { xAxis: { minInterval?: number } }).xAxis.minInterval).toBe(1);
    expect((capacityChartOption(capacity('rate')) as { xAxis: { minInterval?: number } }).xAxis.minInterval).toBeUndefined();
  });
});
