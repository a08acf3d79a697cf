import type { EChartsCoreOption } from 'echarts/core';
import type { ExperimentResult } from '../../../shared/contract/experiments';
import { bubbleDiameter, quantTradeoffPoints } from '../../../shared/quant-tradeoff-points';

/**
 * The quantization answer at a glance: speed (TPOT p50) against quality loss (KLD against the
 * baseline, else the share of its greedy tokens not reproduced), bubble area by server VRAM
 * (file size without a GPU), the quality gate drawn as a line and the recommendation marked.
 */
export function quantTradeoffOption(result: ExperimentResult): EChartsCoreOption | null {
  const chart = quantTradeoffPoints(result);
  if (chart === null) return null;
  const { points, threshold } = chart;
  return {
    animation: false,
    title: { text: `Speed against quality (bubble: ${chart.memoryLabel})`, textStyle: { fontSize: 13 } },
    tooltip: { trigger: 'item' },
    // Both axis names run along their axes, so the top of the plot is left to the labels of the
    // highest bubbles; each axis leaves room past its extreme points for a whole bubble and its label.
    grid: { top: 56, left: 88, right: 40 },
    xAxis: { type: 'value', name: chart.xName, nameLocation: 'middle', nameGap: 26, scale: true, boundaryGap: ['8%', '8%'] },
    // Quality loss is never below zero: the axis starts there rather than at a padded negative value.
    yAxis: { type: 'value', name: chart.yName, nameLocation: 'middle', nameGap: 64, min: 0, boundaryGap: ['0%', '25%'] },
    series: [
      {
        type: 'scatter',
        data: points.map((point) => ({
          name: point.name,
          value: [point.x, point.y, point.memory],
          symbolSize: bubbleDiameter(point.memory, chart.largestMemory),
          itemStyle: point.recommended ? { borderColor: '#1a7f37', borderWidth: 3 } : undefined,
          label: {
            show: true,
            position: 'top',
            formatter: point.recommended ? `${point.name} (recommended)` : point.name,
          },
        })),
        markLine:
          threshold !== null
            ? { symbol: 'none', label: { formatter: `gate: KLD ≤ ${threshold}` }, data: [{ yAxis: threshold }] }
            : undefined,
      },
    ],
  };
}
