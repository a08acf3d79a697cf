import { PERCENTILE_MIN_N } from '../../../shared/experiment-defaults';

/** Every number on screen carries its unit; missing values show as an em dash, never 0. */
export function ms(value: number | null | undefined, digits?: number): string {
  if (value === null || value === undefined) return '—';
  return `${value.toFixed(digits ?? (value < 10 ? 2 : 1))} ms`;
}

export function num(value: number | null | undefined, unit = '', digits = 1): string {
  if (value === null || value === undefined) return '—';
  return `${value.toFixed(digits)}${unit ? ` ${unit}` : ''}`;
}

export function bytes(value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  if (value >= 2 ** 30) return `${(value / 2 ** 30).toFixed(2)} GiB`;
  return `${(value / 2 ** 20).toFixed(1)} MiB`;
}

export function pct(fraction: number | null | undefined): string {
  return fraction === null || fraction === undefined ? '—' : `${(fraction * 100).toFixed(1)} %`;
}

/**
 * One formatter per time zone: building an Intl.DateTimeFormat costs far more than formatting
 * with one, and a list of runs formats a timestamp per row.
 */
const timestampFormats = new Map<string | undefined, Intl.DateTimeFormat>();
function timestampFormat(timeZone: string | undefined): Intl.DateTimeFormat {
  let format = timestampFormats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-CA', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'short',
    });
    timestampFormats.set(timeZone, format);
  }
  return format;
}

/** A stored UTC timestamp in the viewer's local time, with the zone named ("2026-11-30 17:13:02 GMT+1"). */
export function when(iso: string, timeZone?: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const parts = Object.fromEntries(
    timestampFormat(timeZone)
      .formatToParts(date)
      .map((part) => [part.type, part.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second} ${parts.timeZoneName}`;
}

/** A percentile, or "n too small" where n cannot support it (summaries stored before `unsupported` existed are judged from n). */
export function pctl(
  d: { n: number; unsupported?: readonly string[] } & Partial<Record<'p50' | 'p90' | 'p95' | 'p99', number | null>>,
  label: 'p50' | 'p90' | 'p95' | 'p99',
): string {
  if (label !== 'p50' && d.n > 0 && (d.unsupported?.includes(label) ?? d.n < PERCENTILE_MIN_N[label])) return 'n too small';
  return ms(d[label]);
}
