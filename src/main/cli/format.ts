/** Plain-text tables for the terminal: columns padded to their widest cell. */
export function formatTable(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, index) => (widths[index] = Math.max(widths[index] ?? 0, cell.length)));
  return rows.map((row) => row.map((cell, index) => (index === row.length - 1 ? cell : cell.padEnd(widths[index] ?? 0))).join('  ')).join('\n');
}

export function formatMs(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : `${value.toFixed(value < 10 ? 2 : 1)} ms`;
}

export function formatNumber(value: number | null | undefined, digits = 1): string {
  return value === null || value === undefined ? '—' : value.toFixed(digits);
}
