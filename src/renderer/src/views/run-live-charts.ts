import type { StartRunSpec } from '../../../shared/contract';
import type { TelemetryTick } from '../../../shared/contract/telemetry';
import type { LiveServerMetrics } from './live-server-metrics';
import { chartFrame } from '../components/chart-frame';

// The Run view's live charts, as ECharts options built from what the run has streamed so far.

/** A dashed horizontal line at an SLO, labelled; nothing when there is none. */
function sloLine(value: number | null | undefined, label: string) {
  return value == null
    ? undefined
    : {
        symbol: 'none',
        lineStyle: { type: 'dashed', color: '#cf222e' },
        label: { formatter: `${label} ${value} ms`, position: 'insideEndTop' },
        data: [{ yAxis: value }],
      };
}

/** A chart over the run's seconds with a value axis on each side and the legend below. */
function timelineFrame(title: string, left: Record<string, unknown>, right: Record<string, unknown>) {
  return {
    ...chartFrame(title, { tooltip: 'axis', grid: { top: 50, bottom: 60 } }),
    xAxis: { type: 'value', name: 's', nameLocation: 'middle', nameGap: 24 },
    yAxis: [
      { type: 'value', ...left },
      { type: 'value', ...right },
    ],
  };
}

/** Each request's TTFT against its send time, with the SLO's line; the axis reaches the SLO. */
export function ttftChartOption(points: [number, number][], slo: StartRunSpec['slo']) {
  return {
    animation: false,
    title: { text: 'TTFT per request', textStyle: { fontSize: 13 } },
    tooltip: { trigger: 'item' },
    xAxis: { type: 'value', name: 's on the run clock', nameLocation: 'middle', nameGap: 24 },
    // The axis reaches the SLO, so its line is drawn even when every request is well inside it.
    yAxis: {
      type: 'value',
      name: 'TTFT (ms)',
      max: slo?.ttft_ms != null ? (extent: { max: number }) => Math.ceil(Math.max(extent.max, slo.ttft_ms! * 1.1) / 100) * 100 : undefined,
    },
    series: [
      {
        type: 'scatter',
        symbolSize: 5,
        data: points.map(([t, ttft]) => [t / 1000, ttft]),
        markLine: sloLine(slo?.ttft_ms, 'SLO TTFT'),
      },
    ],
  };
}

/** The server's own /metrics: generated tokens per second, and requests decoding or waiting for a slot. */
export function serverMetricsChartOption(serverMetrics: LiveServerMetrics) {
  return {
    ...timelineFrame("The server's own /metrics: generation speed and queue", { name: 'tokens/s' }, { name: 'requests', minInterval: 1 }),
    series: [
      { name: 'generated tokens/s', type: 'line', showSymbol: false, data: serverMetrics.tokensPerS },
      { name: 'decoding', type: 'line', step: 'end', showSymbol: false, yAxisIndex: 1, data: serverMetrics.processing },
      { name: 'waiting for a slot', type: 'line', step: 'end', showSymbol: false, yAxisIndex: 1, data: serverMetrics.waiting },
    ],
  };
}

/** GPU memory and utilization (or the server process's RSS and CPU without GPU telemetry), with request sends marked. */
export function telemetryChartOption(telemetry: TelemetryTick[], ttft: [number, number][]) {
  const gpuAvailable = telemetry.some((tick) => tick.gpus.length > 0);
  // Telemetry and request sends share the run's clock, so the markers line up with the samples.
  const x = (t: number) => t / 1000;
  const markers = {
    name: 'requests sent',
    type: 'scatter',
    symbol: 'triangle',
    symbolSize: 6,
    itemStyle: { opacity: 0.5 },
    data: ttft.map(([t]) => [x(t), 0]),
  };
  const series = gpuAvailable
    ? [
        {
          name: 'GPU memory (MiB)',
          type: 'line',
          showSymbol: false,
          data: telemetry.map((tick) => [x(tick.t), tick.gpus[0]?.memoryUsedMib ?? null]),
        },
        {
          name: 'GPU utilization (%)',
          type: 'line',
          showSymbol: false,
          yAxisIndex: 1,
          data: telemetry.map((tick) => [x(tick.t), tick.gpus[0]?.utilizationPct ?? null]),
        },
        markers,
      ]
    : [
        {
          name: 'server RSS (MiB)',
          type: 'line',
          showSymbol: false,
          data: telemetry.map((tick) => [x(tick.t), tick.serverProcess ? tick.serverProcess.rssBytes / 2 ** 20 : null]),
        },
        {
          name: 'server CPU (%)',
          type: 'line',
          showSymbol: false,
          yAxisIndex: 1,
          data: telemetry.map((tick) => [x(tick.t), tick.serverProcess?.cpuPct ?? null]),
        },
        markers,
      ];
  return {
    ...timelineFrame(
      gpuAvailable ? 'GPU memory and utilization' : 'Server process (no GPU telemetry on this machine)',
      { name: 'MiB' },
      { name: '%' },
    ),
    series,
  };
}
