import type { ComparedRun } from '../../../shared/contract/compare';
import { escapeHtml } from '../../../shared/html-escape';

/** One point per run: output throughput against TTFT p95; runs missing either figure are left out. */
export function tradeOffOption(runs: readonly ComparedRun[]) {
  return {
    animation: false,
    title: { text: 'Output throughput against TTFT p95 (one point per run)', textStyle: { fontSize: 13 } },
    tooltip: {
      trigger: 'item',
      // A run's label holds its model and workload names, which an imported run chooses.
      formatter: (item: { data: [number, number, string] }) =>
        escapeHtml(`${item.data[2]}: ${item.data[1].toFixed(1)} tok/s at ${item.data[0].toFixed(1)} ms`),
    },
    xAxis: { type: 'value', name: 'TTFT p95 (ms)', nameLocation: 'middle', nameGap: 24 },
    yAxis: { type: 'value', name: 'output tok/s' },
    series: [
      {
        type: 'scatter',
        symbolSize: 10,
        data: runs
          .filter((run) => run.ttftP95Ms !== null && run.outputTokensPerS !== null)
          .map((run) => [run.ttftP95Ms, run.outputTokensPerS, run.label]),
      },
    ],
  };
}
