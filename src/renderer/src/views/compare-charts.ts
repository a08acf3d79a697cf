import type { CdfMetric, ComparedRun } from '../../../shared/contract/compare';
import { METRIC_TABLE } from '../../../shared/metric-table';

// Compare's charts, as ECharts options built from the comparison's runs.

function cdf(values: number[]): [number, number][] {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.map((value, index) => [value, (index + 1) / sorted.length]);
}

/** One step line per run: the share of requests at or under each latency. */
export function cdfChartOption(runs: readonly ComparedRun[], metric: CdfMetric) {
  return {
    animation: false,
    title: { text: `CDF of ${METRIC_TABLE[metric].label}`, textStyle: { fontSize: 13 } },
    // Below the plot, as on the memory chart: at the top the legend ran into the title.
    legend: { bottom: 0, type: 'scroll' },
    tooltip: { trigger: 'axis' },
    grid: { top: 48, bottom: 64 },
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
    animation: false,
    title: { text: 'GPU memory over each run', textStyle: { fontSize: 13 } },
    legend: { bottom: 0, type: 'scroll' },
    tooltip: { trigger: 'axis' },
    grid: { bottom: 60 },
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
