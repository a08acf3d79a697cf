import type { CustomSeriesRenderItemAPI, CustomSeriesRenderItemParams, CustomSeriesRenderItemReturn } from 'echarts';
import type { EChartsCoreOption } from 'echarts/core';
import type { HistoryConfiguration, MetricHistory } from '../../../shared/contract/history';
import { escapeHtml } from '../../../shared/html-escape';
import { chartFrame } from '../components/chart-frame';

const MEAN_COLOR = '#0969da';
const RUN_COLOR = '#8c959f';
const RUN_SPREAD_PX = 7;

export function metricLabel(history: Pick<MetricHistory, 'metric' | 'statistic'>): string {
  return `${history.metric}${history.statistic ? ` ${history.statistic}` : ''}`;
}

/** A whisker from the interval's low to its high end, capped at both, centred on the build's slot. */
function errorBar(_params: CustomSeriesRenderItemParams, api: CustomSeriesRenderItemAPI): CustomSeriesRenderItemReturn {
  const slot = api.value(0);
  const top = api.coord([slot, api.value(2)]);
  const bottom = api.coord([slot, api.value(1)]);
  const cap = (api.size?.([1, 0]) as number[] | undefined)?.[0] ?? 40;
  const half = Math.min(12, cap * 0.12);
  const style = { stroke: MEAN_COLOR, lineWidth: 1.5 };
  const line = (x1: number, y1: number, x2: number, y2: number) => ({ type: 'line' as const, shape: { x1, y1, x2, y2 }, style });
  return {
    type: 'group',
    children: [
      line(top[0]! - half, top[1]!, top[0]! + half, top[1]!),
      line(top[0]!, top[1]!, bottom[0]!, bottom[1]!),
      line(bottom[0]! - half, bottom[1]!, bottom[0]! + half, bottom[1]!),
    ],
  };
}

/**
 * One configuration's history: the builds in the order they first ran along x, each build's
 * mean joined by a line with its 95 % interval as an error bar, and every run as a grey dot, so
 * a mean resting on one noisy run is seen for what it is.
 */
export function historyChartOption(history: MetricHistory, configuration: HistoryConfiguration): EChartsCoreOption {
  const builds = configuration.builds;
  const unit = history.unit;
  return {
    ...chartFrame(`${metricLabel(history)} by engine build (${history.higherIsBetter ? 'higher' : 'lower'} is better)`, {
      tooltip: 'item',
      grid: { top: 48, left: 64, right: 24, bottom: 72 },
    }),
    xAxis: { type: 'category', data: builds.map((build) => build.label), name: 'engine build', nameLocation: 'middle', nameGap: 30 },
    yAxis: { type: 'value', name: unit, scale: true },
    series: [
      {
        type: 'scatter',
        name: 'runs',
        color: RUN_COLOR,
        symbolSize: 8,
        data: builds.flatMap((build, slot) => {
          const shown = build.runs.filter((run) => run.value !== null);
          // Spread side by side: runs with equal values would otherwise hide one another.
          return shown.map((run, index) => ({
            value: [slot, run.value],
            name: run.runId.slice(0, 8),
            symbolOffset: [(index - (shown.length - 1) / 2) * RUN_SPREAD_PX, 0],
          }));
        }),
        tooltip: {
          formatter: (item: { name: string; value: [number, number] }) =>
            escapeHtml(`run ${item.name}: ${item.value[1].toFixed(2)} ${unit}`),
        },
      },
      {
        type: 'line',
        name: 'mean',
        color: MEAN_COLOR,
        symbol: 'diamond',
        symbolSize: 12,
        data: builds.map((build, slot) => [slot, build.mean]),
        tooltip: {
          formatter: (item: { dataIndex: number }) => {
            const build = builds[item.dataIndex]!;
            const interval = build.interval ? ` [${build.interval[0].toFixed(2)}, ${build.interval[1].toFixed(2)}]` : '';
            return escapeHtml(
              `${build.label}: mean ${build.mean === null ? '—' : build.mean.toFixed(2)} ${unit}${interval} over ${build.runs.length} run(s)`,
            );
          },
        },
      },
      {
        type: 'custom',
        name: '95 % interval',
        color: MEAN_COLOR,
        renderItem: errorBar,
        encode: { x: 0, y: [1, 2] },
        data: builds.flatMap((build, slot) => (build.interval ? [[slot, build.interval[0], build.interval[1]]] : [])),
        z: 1,
      },
    ],
  };
}
