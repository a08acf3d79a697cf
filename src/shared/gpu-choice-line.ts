import type { TelemetrySummary } from './contract/telemetry';

type GpuTelemetry = NonNullable<TelemetrySummary['gpu']>;

/**
 * Which GPUs a run counted when its profile chose some (gpuDevices), and what the others did
 * meanwhile, as other GPU activity; null when every GPU counted.
 */
export function gpuChoiceLine(gpu: GpuTelemetry): string | null {
  const chosen = gpu.chosen_indexes;
  if (!chosen) return null;
  const others = (gpu.per_gpu ?? []).filter((entry) => !chosen.includes(entry.index));
  const counted = `GPU${chosen.length === 1 ? '' : 's'} ${chosen.join(', ')} of ${gpu.gpu_count ?? '?'} counted (gpuDevices=${chosen.join(',')})`;
  if (others.length === 0) return counted;
  const activity = others.map(
    (entry) =>
      `GPU ${entry.index}${entry.name ? ` (${entry.name})` : ''} peak ${entry.peak_used_mib === null ? '—' : `${entry.peak_used_mib.toFixed(0)} MiB`}, ${entry.utilization_pct_mean === null ? '—' : `${entry.utilization_pct_mean.toFixed(0)} %`} busy`,
  );
  return `${counted}; other GPU activity: ${activity.join('; ')}`;
}
