import type { ConditionEfficiency } from './contract/experiments';
import type { DecodeBandwidth } from './contract/runs';
import type { EnergySummary, ThrottleSummary } from './contract/telemetry';
import { ranEmbeddings } from './metric-columns';

/** One-line readings of a run's energy, clock slowdowns and decode bandwidth, for the CLI and the run view alike. */

const fixed = (value: number | null | undefined, digits: number, unit = '') =>
  value === null || value === undefined ? '—' : `${value.toFixed(digits)}${unit}`;

/** Three significant digits whatever the size (a joule per token can be 0.0021 or 35). */
const sig = (value: number | null | undefined, unit = '') =>
  value === null || value === undefined ? '—' : `${value >= 100 ? value.toFixed(0) : value.toPrecision(3)}${unit}`;

export function energyLine(energy: EnergySummary | undefined): string | null {
  if (!energy) return null;
  if (energy.joules === null) return `energy: — (${energy.reason})`;
  if (energy.context_only) return `energy: — (${energy.reason}: ${sig(energy.joules, ' J')} from ${energy.source})`;
  const source = energy.source === 'rapl' ? `RAPL ${energy.rapl_domains?.join(' + ') ?? ''}`.trim() : energy.source;
  const perGpu =
    energy.per_gpu && energy.per_gpu.length > 1
      ? `; per GPU ${energy.per_gpu.map((gpu) => `${gpu.index}: ${sig(gpu.joules, ' J')}`).join(', ')}`
      : '';
  return `energy: ${sig(energy.joules, ' J')} (${source}, ${fixed(energy.coverage === null ? null : energy.coverage * 100, 0, ' %')} of the window covered${perGpu}); ${sig(energy.joules_per_request, ' J')}/request, ${sig(energy.joules_per_output_token, ' J')}/output token, ${sig(energy.output_tokens_per_joule)} output tokens/J`;
}

export function throttleLine(throttle: ThrottleSummary | undefined): string | null {
  if (!throttle) return null;
  const clocks = `SM ${fixed(throttle.sm_clock_mhz_mean, 0, ' MHz')}, memory ${fixed(throttle.mem_clock_mhz_mean, 0, ' MHz')}`;
  if (throttle.throttled === null) return `clocks: throttling unknown (${throttle.reason})`;
  if (!throttle.throttled) return `clocks: ${clocks}; not throttled in ${throttle.samples} readings`;
  return `THROTTLED: ${throttle.reasons.join(', ')} in ${fixed((throttle.share_of_samples ?? 0) * 100, 0, ' %')} of ${throttle.samples} readings; ${clocks}`;
}

export function bandwidthLine(bandwidth: DecodeBandwidth | undefined): string | null {
  if (!bandwidth) return null;
  if (bandwidth.effective_gb_per_s === null) return `decode bandwidth: — (${bandwidth.reason})`;
  const mib = (value: number | null) => (value === null ? '—' : `${(value / 2 ** 20).toFixed(value < 10 * 2 ** 20 ? 2 : 0)} MiB`);
  const peak = bandwidth.peak
    ? `${fixed((bandwidth.utilization ?? 0) * 100, 0, ' %')} of ${sig(bandwidth.peak.gb_per_s, ' GB/s')} ${bandwidth.peak.label} (${bandwidth.peak.kind})`
    : `no peak to compare with (${bandwidth.peak_reason})`;
  return `decode bandwidth: ${sig(bandwidth.effective_gb_per_s, ' GB/s')}, ${peak}; ${mib(bandwidth.bytes_per_token)} per token (${bandwidth.placement} weights ${mib(bandwidth.weight_bytes)} + KV ${mib(bandwidth.kv_bytes_per_sequence)} at ${fixed(bandwidth.mean_context_tokens, 0)} tokens of context, ${bandwidth.kv_cache_types?.k}/${bandwidth.kv_cache_types?.v}) × ${sig(bandwidth.decode_tokens_per_s)} decode tok/s (${sig(bandwidth.decode_sequences)} sequences at once)${bandwidth.reason ? `; ${bandwidth.reason}` : ''}${bandwidth.cache_note ? `; ${bandwidth.cache_note}` : ''}`;
}

/**
 * A condition's energy and bandwidth as two short table cells, for the experiment tables in the
 * CLI, the view and the report; why a value is missing, and the peak a share is of, are said
 * once under the table (`efficiencyNotes`). Energy cannot be negative, so an interval that
 * reaches below zero (few windows) is shown from zero.
 */
export function efficiencyCells(efficiency: ConditionEfficiency | undefined): { energy: string; bandwidth: string } {
  if (!efficiency) return { energy: '—', bandwidth: '—' };
  const interval = efficiency.joules_per_output_token_ci;
  const energy =
    efficiency.joules_per_output_token === null
      ? '—'
      : `${sig(efficiency.joules_per_output_token, ' J')}${interval ? ` [${sig(Math.max(0, interval[0]))}, ${sig(interval[1])}]` : ''}`;
  const bandwidth =
    efficiency.decode_gb_per_s === null
      ? '—'
      : `${sig(efficiency.decode_gb_per_s, ' GB/s')}${efficiency.bandwidth_utilization === null ? '' : ` (${fixed(efficiency.bandwidth_utilization * 100, 0, ' %')})`}`;
  return { energy, bandwidth };
}

/**
 * Whether a condition's requests decoded tokens, so that energy per output token and decode bandwidth
 * can be its figures: an embeddings condition outputs and decodes nothing (ConditionResult.embeddings).
 */
export const decodesTokens = (condition: object): boolean => !ranEmbeddings(condition);

/** The lines under an experiment's table: the peak each share is of, and why values are missing, each said once. */
export function efficiencyNotes(conditions: readonly { name: string; efficiency?: ConditionEfficiency; embeddings?: unknown }[]): string[] {
  const measured = conditions.filter((condition) => condition.efficiency && decodesTokens(condition));
  const missing = (
    label: string,
    reasonOf: (efficiency: ConditionEfficiency) => string | null,
    isNull: (efficiency: ConditionEfficiency) => boolean,
  ) => {
    const byReason = new Map<string, string[]>();
    for (const condition of measured) {
      if (!isNull(condition.efficiency!)) continue;
      const reason = reasonOf(condition.efficiency!) ?? 'no reason given';
      byReason.set(reason, [...(byReason.get(reason) ?? []), condition.name]);
    }
    return [...byReason].map(
      ([reason, names]) => `${label}: — for ${names.length === measured.length ? 'every condition' : names.join(', ')} (${reason})`,
    );
  };
  const peaks = [
    ...new Set(measured.map((condition) => condition.efficiency!.bandwidth_peak).filter((peak): peak is string => peak !== null)),
  ];
  const nearCache = new Map<string, string[]>();
  for (const condition of measured) {
    const note = condition.efficiency!.bandwidth_cache_note;
    if (note) nearCache.set(note, [...(nearCache.get(note) ?? []), condition.name]);
  }
  return [
    ...peaks.map((peak) => `decode bandwidth (%): share of ${peak}`),
    ...[...nearCache].map(([note, names]) => `decode bandwidth (%) of ${names.join(', ')}: ${note}`),
    ...missing(
      'energy per output token',
      (efficiency) => efficiency.energy_reason,
      (efficiency) => efficiency.joules_per_output_token === null,
    ),
    ...missing(
      'decode bandwidth',
      (efficiency) => efficiency.bandwidth_reason,
      (efficiency) => efficiency.decode_gb_per_s === null,
    ),
  ];
}
