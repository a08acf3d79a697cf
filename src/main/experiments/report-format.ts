import { escapeHtml } from '../../shared/html-escape';

/** Text for the self-contained HTML reports: escaped, and numbers with a dash for none. */
export const escape = (text: unknown) => escapeHtml(String(text ?? '—'));
export const fmt = (value: number | null | undefined, digits = 2) => (value === null || value === undefined ? '—' : value.toFixed(digits));
export const share = (value: number | null | undefined) => (value == null ? '—' : `${(value * 100).toFixed(1)} %`);
