import type { EChartsCoreOption } from 'echarts/core';
import type { CapacityResult } from '../../../shared/contract/experiments';
import { SLO_METRICS } from '../../../shared/contract/runs';
import { chartFrame } from '../components/chart-frame';

const COLORS = ['#0969da', '#8250df', '#bf3989'];

/** Load against each SLO metric's percentile (SLO limits as dashed lines) and goodput on a second axis. */
export function capacityChartOption(capacity: CapacityResult): EChartsCoreOption {
  const metrics = SLO_METRICS.filter((metric) => capacity.slo[metric] !== undefined);
  const steps = [...capacity.steps].sort((a, b) => a.load - b.load);
  const p = `p${capacity.percentile}`;
  return {
    ...chartFrame(`Load against ${p} latency and goodput`, { tooltip: 'axis', grid: { top: 56, bottom: 72, left: 64, right: 64 } }),
    xAxis: {
      type: 'value',
      name: capacity.by === 'rate' ? 'arrival rate (req/s)' : capacity.by === 'users' ? 'concurrent users' : 'concurrency',
      nameLocation: 'middle',
      nameGap: 26,
      // Concurrency and users are whole numbers: no tick between 1 and 2.
      minInterval: capacity.by === 'rate' ? undefined : 1,
    },
    yAxis: [
      { type: 'value', name: `${p} (ms)` },
      { type: 'value', name: 'goodput (req/s)', splitLine: { show: false } },
    ],
    series: [
      ...metrics.map((metric, index) => ({
        type: 'line',
        name: `${metric} ${p}`,
        color: COLORS[index],
        data: steps.filter((step) => step.percentile_ms[metric] != null).map((step) => [step.load, step.percentile_ms[metric]]),
        markLine: {
          symbol: 'none',
          lineStyle: { type: 'dashed' },
          label: { formatter: `${metric} ≤ ${capacity.slo[metric]} ms`, position: 'insideEndTop' },
          data: [{ yAxis: capacity.slo[metric] }],
        },
      })),
      {
        type: 'line',
        name: 'goodput',
        yAxisIndex: 1,
        color: '#1a7f37',
        lineStyle: { type: 'dotted' },
        data: steps.filter((step) => step.goodput_requests_per_s !== null).map((step) => [step.load, step.goodput_requests_per_s]),
        markLine:
          capacity.capacity === null
            ? undefined
            : {
                symbol: 'none',
                // Along the line, halfway up: at its top end it ran into the second axis's name.
                label: { formatter: `capacity ${capacity.capacity}`, position: 'insideMiddleTop' },
                data: [{ xAxis: capacity.capacity }],
              },
      },
      {
        type: 'line',
        name: 'throughput',
        yAxisIndex: 1,
        color: '#6e7781',
        lineStyle: { type: 'dotted' },
        data: steps.filter((step) => step.throughput_requests_per_s !== null).map((step) => [step.load, step.throughput_requests_per_s]),
      },
    ],
  };
}
