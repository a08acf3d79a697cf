import type { VerdictRow } from '../../shared/contract/experiments';
import { formatTable } from './format';

const percent = (value: number) => `${value >= 0 ? '+' : '−'}${Math.abs(value * 100).toFixed(1)} %`;
const amount = (value: number | null) => (value === null ? '—' : value.toFixed(2));

/**
 * Verdicts as a reader should see them: both values, the change with its interval at the
 * confidence its (corrected) decision used, the windows behind it, and the verdict — or,
 * where there is none, why.
 */
export function verdictTable(rows: readonly VerdictRow[]): string {
  if (rows.length === 0) return '  none';
  const family = rows.filter((row) => row.confidence != null).length;
  const table = [
    ['metric', 'A → B', 'A', 'B', 'change', 'interval', 'windows', 'verdict'],
    ...rows.map((row) => [
      row.metric,
      `${row.a} → ${row.b}`,
      amount(row.a_value),
      amount(row.b_value),
      row.relative_difference == null ? '—' : percent(row.relative_difference),
      row.relative_ci && row.confidence != null
        ? `[${percent(row.relative_ci[0])}, ${percent(row.relative_ci[1])}] at ${(row.confidence * 100).toFixed(2)} %`
        : '—',
      row.windows ? `${row.windows[0]} vs ${row.windows[1]}` : '—',
      row.verdict === 'equivalent' ? `equivalent within ±${((row.equivalence_margin ?? 0) * 100).toFixed(0)} %` : row.verdict,
    ]),
  ];
  const notes = rows
    .filter((row) => row.note && row.verdict === 'insufficient data')
    .map((row) => `  ${row.metric} ${row.a} → ${row.b}: ${row.note}`);
  const rule = [
    `  ${family} verdict(s) decided together: t tests over windows (the unit of replication), Holm-corrected to 95 % family-wise; each interval is at the level its decision used.`,
    "  A and B pool every request; change and interval compare the windows (B/A of the geometric means of each window's statistic), so they can differ from B/A of the pooled values, by much where one window stands apart.",
  ].join('\n');
  return `${formatTable(table)
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n')}\n${rule}${notes.length > 0 ? `\n${[...new Set(notes)].join('\n')}` : ''}`;
}
