import { escapeHtml } from '../../shared/html-escape';

/** Text for the self-contained HTML reports: escaped, and numbers with a dash for none. */
export const escape = (text: unknown) => escapeHtml(String(text ?? '—'));
export const fmt = (value: number | null | undefined, digits = 2) => (value === null || value === undefined ? '—' : value.toFixed(digits));
export const share = (value: number | null | undefined) => (value == null ? '—' : `${(value * 100).toFixed(1)} %`);

/** A horizontal bar chart as inline SVG: no scripts, no network. */
export function barChart(title: string, unit: string, bars: { label: string; value: number | null }[]): string {
  const width = 640;
  const rowHeight = 26;
  const max = Math.max(1e-9, ...bars.map((bar) => bar.value ?? 0));
  const rows = bars.map((bar, index) => {
    const y = 30 + index * rowHeight;
    const length = bar.value === null ? 0 : (bar.value / max) * (width - 260);
    return `<text x="0" y="${y + 16}" font-size="12">${escape(bar.label)}</text><rect x="150" y="${y + 4}" width="${length.toFixed(1)}" height="16" fill="#0969da"/><text x="${(156 + length).toFixed(1)}" y="${y + 16}" font-size="12">${bar.value === null ? '—' : `${fmt(bar.value)} ${escape(unit)}`}</text>`;
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${40 + bars.length * rowHeight}" role="img" aria-label="${escape(title)}"><text x="0" y="16" font-size="13" font-weight="bold">${escape(title)}</text>${rows.join('')}</svg>`;
}
