import { SLO_METRICS, type SloMetric, type SloSpec } from '../../../shared/contract/runs';
import { METRIC_TABLE } from '../../../shared/metric-table';
import { NumberField } from './NumberField';

/** An SLO's limits as typed, one text per latency an SLO may limit (`slo` in the metric table). */
export type SloText = Record<SloMetric, string>;

export function sloText(slo: SloSpec | null | undefined): SloText {
  return Object.fromEntries(SLO_METRICS.map((metric) => [metric, String(slo?.[metric] ?? '')])) as SloText;
}

/** The limits typed, as a spec's `slo`; null when none is. */
export function sloOfText(text: SloText): SloSpec | null {
  const limits = SLO_METRICS.flatMap((metric) => (text[metric].trim() === '' ? [] : [[metric, Number(text[metric])] as const]));
  return limits.length > 0 ? Object.fromEntries(limits) : null;
}

/** A number field per latency an SLO may limit, labelled from the metric table: "SLO TTFT (ms)", "TPOT (ms)", … */
export function SloFields({ value, onChange, ariaPrefix }: { value: SloText; onChange: (next: SloText) => void; ariaPrefix: string }) {
  return SLO_METRICS.map((metric, index) => {
    const { label, unit } = METRIC_TABLE[metric];
    return (
      <NumberField
        key={metric}
        label={`${index === 0 ? 'SLO ' : ''}${label} (${unit})`}
        aria-label={`${ariaPrefix} ${label.toLowerCase()}`}
        min={0}
        step="any"
        value={value[metric]}
        onChange={(event) => onChange({ ...value, [metric]: event.target.value })}
      />
    );
  });
}
