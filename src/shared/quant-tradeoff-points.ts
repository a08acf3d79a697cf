import type { ExperimentResult } from './contract/experiments';

export interface QuantTradeoffPoint {
  name: string;
  /** TPOT p50, ms. */
  x: number;
  /** Quality loss against the baseline: KLD mean, else 1 − token agreement. */
  y: number;
  /** Server VRAM, else file size, MiB; null when neither is known. */
  memory: number | null;
  recommended: boolean;
}

export interface QuantTradeoff {
  points: QuantTradeoffPoint[];
  xName: string;
  yName: string;
  memoryLabel: 'server VRAM' | 'file size';
  /** The KLD gate, when the chart plots KLD and the gate names a number. */
  threshold: number | null;
  /** The largest memory of any point (at least 1), which bubble sizes are relative to. */
  largestMemory: number;
}

/**
 * The data of the quantization trade-off chart, shared by the app (ECharts) and the HTML report
 * (inline SVG) so the two draw the same points, axes and gate. Null when no condition has both a
 * speed and a quality figure.
 */
export function quantTradeoffPoints(result: ExperimentResult): QuantTradeoff | null {
  const kldGate = result.recommendation.gates?.find((gate) => gate.name === 'kld');
  // One quality measure for all points: KLD when any condition has it, since mixing scales would mislead.
  const useKld = result.conditions.some((condition) => condition.kld_mean != null);
  const quality = (condition: ExperimentResult['conditions'][number]): number | null =>
    useKld ? (condition.kld_mean ?? null) : condition.token_agreement?.mean != null ? 1 - condition.token_agreement.mean : null;
  // Without GPU telemetry the file size is the best stand-in for what a quantization saves.
  const memoryMib = (condition: ExperimentResult['conditions'][number]): number | null =>
    condition.vram?.server_mib ?? (condition.file_bytes != null ? condition.file_bytes / 2 ** 20 : null);
  const points: QuantTradeoffPoint[] = [];
  for (const condition of result.conditions) {
    const x = condition.metrics.tpot_ms.p50;
    const y = quality(condition);
    if (x === null || y === null) continue;
    points.push({ name: condition.name, x, y, memory: memoryMib(condition), recommended: condition.name === result.recommendation.choice });
  }
  if (points.length === 0) return null;
  // The gate's threshold is stored as words ("mean KL divergence ≤ 0.1 nats per token"); its first number is the limit.
  const threshold = useKld && kldGate ? Number(/([\d.]+)/.exec(kldGate.threshold)?.[1]) : null;
  return {
    points,
    xName: 'TPOT p50 (ms), lower is faster',
    yName: useKld ? 'KLD vs baseline (nats)' : '1 − token agreement',
    memoryLabel: result.conditions.some((condition) => condition.vram?.server_mib != null) ? 'server VRAM' : 'file size',
    threshold: threshold !== null && Number.isFinite(threshold) ? threshold : null,
    largestMemory: Math.max(...points.map((point) => point.memory ?? 0), 1),
  };
}

/** Bubble diameter in pixels: area grows with memory, and a point without a memory figure stays visible. */
export function bubbleDiameter(memory: number | null, largestMemory: number): number {
  return 12 + 36 * Math.sqrt((memory ?? 0) / largestMemory);
}
