import type { EChartsCoreOption } from 'echarts/core';
import type { ExperimentResult } from '../../../shared/contract/experiments';

/**
 * The quantization answer at a glance: speed (TPOT p50) against quality loss (KLD against the
 * baseline, else the share of its greedy tokens not reproduced), bubble area by server VRAM
 * (file size without a GPU), the quality gate drawn as a line and the recommendation marked.
 */
export function quantTradeoffOption(result: ExperimentResult): EChartsCoreOption | null {
  const kldGate = result.recommendation.gates?.find((gate) => gate.name === 'kld');
  const useKld = result.conditions.some((condition) => condition.kld_mean != null);
  const quality = (condition: ExperimentResult['conditions'][number]): number | null =>
    useKld ? (condition.kld_mean ?? null) : condition.token_agreement?.mean != null ? 1 - condition.token_agreement.mean : null;
  const memoryMib = (condition: ExperimentResult['conditions'][number]): number | null =>
    condition.vram?.server_mib ?? (condition.file_bytes != null ? condition.file_bytes / 2 ** 20 : null);
  const points = result.conditions
    .map((condition) => ({ name: condition.name, x: condition.metrics.tpot_ms.p50, y: quality(condition), memory: memoryMib(condition) }))
    .filter((point): point is { name: string; x: number; y: number; memory: number | null } => point.x !== null && point.y !== null);
  if (points.length === 0) return null;
  const largest = Math.max(...points.map((point) => point.memory ?? 0), 1);
  const threshold = useKld && kldGate ? Number(/([\d.]+)/.exec(kldGate.threshold)?.[1]) : null;
  const memoryLabel = result.conditions.some((condition) => condition.vram?.server_mib != null) ? 'server VRAM' : 'file size';
  return {
    animation: false,
    title: { text: `Speed against quality (bubble: ${memoryLabel})`, textStyle: { fontSize: 13 } },
    tooltip: { trigger: 'item' },
    // Room above the plot for the axis name and the labels of the highest bubbles.
    grid: { top: 64, left: 72, right: 32 },
    xAxis: { type: 'value', name: 'TPOT p50 (ms), lower is faster', nameLocation: 'middle', nameGap: 26, scale: true },
    yAxis: { type: 'value', name: useKld ? 'KLD vs baseline (nats)' : '1 − token agreement', scale: true },
    series: [
      {
        type: 'scatter',
        data: points.map((point) => ({
          name: point.name,
          value: [point.x, point.y, point.memory],
          symbolSize: 12 + 36 * Math.sqrt((point.memory ?? 0) / largest),
          itemStyle: point.name === result.recommendation.choice ? { borderColor: '#1a7f37', borderWidth: 3 } : undefined,
          label: {
            show: true,
            position: 'top',
            formatter: point.name === result.recommendation.choice ? `${point.name} (recommended)` : point.name,
          },
        })),
        markLine:
          threshold !== null && Number.isFinite(threshold)
            ? { symbol: 'none', label: { formatter: `gate: KLD ≤ ${threshold}` }, data: [{ yAxis: threshold }] }
            : undefined,
      },
    ],
  };
}
