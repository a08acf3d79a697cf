/** Text for the self-contained HTML reports: escaped, and numbers with a dash for none. */
export const escape = (text: unknown) =>
  String(text ?? '—').replace(/[&<>"']/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char]!);
export const fmt = (value: number | null | undefined, digits = 2) => (value === null || value === undefined ? '—' : value.toFixed(digits));
