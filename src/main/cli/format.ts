import { PERCENTILE_MIN_N } from '../../shared/experiment-defaults';
import { terminalText } from './terminal-text';

/**
 * Plain-text tables for the terminal: columns padded to their widest cell. A cell is one line: a line
 * feed, a tab or another control character in one (a stored name) is shown as an escape.
 */
export function formatTable(rawRows: readonly (readonly string[])[]): string {
  const rows = rawRows.map((row) => row.map((cell) => terminalText(cell, { oneLine: true })));
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, index) => (widths[index] = Math.max(widths[index] ?? 0, cell.length)));
  return rows
    .map((row) => row.map((cell, index) => (index === row.length - 1 ? cell : cell.padEnd(widths[index] ?? 0))).join('  '))
    .join('\n');
}

export function formatMs(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : `${value.toFixed(value < 10 ? 2 : 1)} ms`;
}

/** A share (0.953) as a percentage with one decimal ("95.3 %"). */
export function formatShare(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : `${(value * 100).toFixed(1)} %`;
}

export function formatNumber(value: number | null | undefined, digits = 1): string {
  return value === null || value === undefined ? '—' : value.toFixed(digits);
}

type PercentileLabel = 'p50' | 'p90' | 'p95' | 'p99';

/**
 * A percentile of a distribution in ms, or "n too small" when n cannot support it. Summaries
 * stored before distributions listed `unsupported` are judged from n by the same rule.
 */
export function formatPercentile(
  distribution: { n: number; unsupported?: readonly string[] } & Partial<Record<PercentileLabel, number | null>>,
  label: PercentileLabel,
): string {
  if (label !== 'p50' && distribution.n > 0 && (distribution.unsupported?.includes(label) ?? distribution.n < PERCENTILE_MIN_N[label]))
    return 'n too small';
  return formatMs(distribution[label]);
}
