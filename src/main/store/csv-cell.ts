// A spreadsheet runs a cell starting with one of these as a formula (tab and CR too, after trimming).
const FORMULA_START = /^[=+\-@\t\r]/;
const NUMERIC = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?$/i;

export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  let text = String(value);
  // Text from a workload or a server (group names, item ids, errors) is quoted out of formula
  // position with a leading apostrophe; numbers, negative ones included, stay numbers.
  if (typeof value !== 'number' && FORMULA_START.test(text) && !NUMERIC.test(text)) text = `'${text}`;
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvLines(header: readonly string[], rows: readonly (readonly unknown[])[]): string {
  const lines = rows.map((row) => row.map(csvCell).join(','));
  return `${header.map(csvCell).join(',')}\n${lines.join('\n')}${lines.length ? '\n' : ''}`;
}
