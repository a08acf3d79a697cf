import { CHECK_LATENCIES, CHECK_RATES, CHECK_STATISTICS, type CheckedMetric } from '../../shared/contract/check';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { metricDefinition, namesInWords } from '../../shared/metric-table';

/** `tpot_ms:p50,ttft_ms:p95,output_tokens_per_s` → the metrics the gate judges. */
export function parseCheckMetrics(text: string): CheckedMetric[] {
  const metrics = text
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry): CheckedMetric => {
      const [metric, statistic = 'p50'] = entry.split(':');
      const definition = metricDefinition(metric ?? '');
      if (definition && !definition.perRequest) {
        if (statistic !== 'p50' && statistic !== 'mean')
          throw new AppError(ErrorCode.Usage, `${metric} is one rate per run; drop ":${statistic}"`);
        if (!(CHECK_RATES as readonly string[]).includes(metric!))
          throw new AppError(ErrorCode.Usage, `--metrics: the gate judges ${namesInWords(CHECK_RATES)} among the rates, not ${metric}`);
        return { metric, statistic: 'mean' } as CheckedMetric;
      }
      const statistics: readonly string[] = definition?.judged.gate ?? [];
      if (!(CHECK_LATENCIES as readonly string[]).includes(metric!) || !statistics.includes(statistic))
        throw new AppError(
          ErrorCode.Usage,
          `--metrics: "${entry}" is not one of ${CHECK_LATENCIES.join(', ')} with :${CHECK_STATISTICS.join('|')}, or ${namesInWords(CHECK_RATES)}`,
        );
      return { metric, statistic } as CheckedMetric;
    });
  if (metrics.length === 0) throw new AppError(ErrorCode.Usage, '--metrics names no metric');
  return metrics;
}

/** `5%` or `0.05` → 0.05. */
export function parseMargin(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(%?)$/.exec(text.trim());
  const value = match ? Number(match[1]) / (match[2] ? 100 : 1) : NaN;
  if (!Number.isFinite(value) || value < 0 || value >= 10)
    throw new AppError(ErrorCode.Usage, `--margin expects a share like 5% or 0.05, got "${text}"`);
  return value;
}
