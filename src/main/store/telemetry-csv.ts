import { csvLines } from './csv-cell';

export interface TelemetrySeries {
  series: string;
  unit: string;
  points: [number, number][];
}

/** `gpu0.memory_used` → kind gpu, gpu 0, field memory_used; `server.cpu` → kind server, no gpu, field cpu. */
function splitSeriesName(name: string): { kind: string; gpu: number | null; field: string } {
  const dot = name.indexOf('.');
  const head = dot < 0 ? name : name.slice(0, dot);
  const field = dot < 0 ? 'value' : name.slice(dot + 1);
  const gpu = /^gpu(\d+)$/.exec(head);
  return gpu ? { kind: 'gpu', gpu: Number(gpu[1]), field } : { kind: head, gpu: null, field };
}

const columnName = (field: string, unit: string) => (unit ? `${field}_${unit === '%' ? 'pct' : unit}` : field);

/**
 * The telemetry as one flat table: a row per sample (time, kind, GPU), a column per field
 * named with its unit, empty where a sampler did not report that field at that time.
 */
export function telemetryCsv(series: readonly TelemetrySeries[]): string {
  const columns = [...new Set(series.map((entry) => columnName(splitSeriesName(entry.series).field, entry.unit)))].sort();
  const rows = new Map<string, { t: number; kind: string; gpu: number | null; values: Map<string, number | null> }>();
  for (const entry of series) {
    const { kind, gpu, field } = splitSeriesName(entry.series);
    const column = columnName(field, entry.unit);
    for (const [t, value] of entry.points) {
      const key = `${t}\u0000${kind}\u0000${gpu ?? ''}`;
      let row = rows.get(key);
      if (!row) rows.set(key, (row = { t, kind, gpu, values: new Map() }));
      // A sampler that could not read a value stored NaN: an empty cell, never a number.
      row.values.set(column, Number.isFinite(value) ? value : null);
    }
  }
  const ordered = [...rows.values()].sort((a, b) => a.t - b.t || a.kind.localeCompare(b.kind) || (a.gpu ?? -1) - (b.gpu ?? -1));
  return csvLines(
    ['t_ms', 'kind', 'gpu', ...columns],
    ordered.map((row) => [row.t, row.kind, row.gpu, ...columns.map((column) => row.values.get(column) ?? null)]),
  );
}
