import type { CdfMetric, ComparedRun } from '../../../shared/contract/compare';
import { METRIC_TABLE } from '../../../shared/metric-table';
import { chartFrame } from '../components/chart-frame';

// Compare's charts, as ECharts options built from the comparison's runs.

function cdf(values: number[]): [number, number][] {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.map((value, index) => [value, (index + 1) / sorted.length]);
}

/** One step line per run: the share of requests at or under each latency. */
export function cdfChartOption(runs: readonly ComparedRun[], metric: CdfMetric) {
  return {
    ...chartFrame(`CDF of ${METRIC_TABLE[metric].label}`, { tooltip: 'axis', grid: { top: 48, bottom: 64 }, scrollLegend: true }),
    xAxis: { type: 'value', name: 'ms', nameLocation: 'middle', nameGap: 24 },
    yAxis: { type: 'value', name: 'fraction', max: 1 },
    series: runs.map((run) => ({
      name: run.label,
      type: 'line',
      showSymbol: false,
      step: 'end',
      data: cdf(run.cdf[metric]),
    })),
  };
}

/** GPU memory over each run, on a shared time axis from each run's start. */
export function vramChartOption(runs: readonly ComparedRun[]) {
  return {
    ...chartFrame('GPU memory over each run', { tooltip: 'axis', grid: { bottom: 60 }, scrollLegend: true }),
    xAxis: { type: 'value', name: 's', nameLocation: 'middle', nameGap: 24 },
    yAxis: { type: 'value', name: 'MiB' },
    series: runs.map((run) => ({
      name: run.label,
      type: 'line',
      showSymbol: false,
      data: run.vramTimeline.map(([t, mib]) => [t / 1000, mib]),
    })),
  };
}
