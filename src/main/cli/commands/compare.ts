import { BOOTSTRAP_MAX_SAMPLES, isRequestNoiseOnly, type Comparison } from '../../../shared/contract/compare';
import { ErrorCode } from '../../../shared/errors';
import { AppError } from '../../core/errors';
import { shellAccess } from '../../services/access';
import { parseOptions, type CommandHandler } from '../args';
import { formatNumber, formatTable } from '../format';
import { openCliServices } from '../service-context';
import { COMPARE_USAGE as USAGE } from '../usage';

function cell(value: number | null | undefined, unit: string): string {
  if (value == null) return '—';
  // A joule per output token can be 0.0021 on a GPU: three significant digits, not two decimals.
  const text = unit === 'J' && Math.abs(value) < 10 ? value.toPrecision(3) : formatNumber(value, Math.abs(value) < 10 ? 2 : 1);
  return `${text}${unit ? ` ${unit}` : ''}`;
}

/**
 * One row per metric: the baseline's value, then each run's value, change with its interval, and
 * verdict. An interval of one window a side says so in place of a verdict, and once below the table why.
 */
export function comparisonTable(comparison: Comparison): string {
  const [baseline, ...others] = comparison.runs;
  const header = [
    'metric',
    `A ${baseline!.runId.slice(0, 8)}`,
    ...others.map((run) => `B ${run.runId.slice(0, 8)}: value, B − A [95 % CI], verdict`),
  ];
  const rows = comparison.rows.map((row) => [
    row.metric,
    cell(row.values[0], row.unit),
    ...others.map((_run, index) => {
      const difference = row.differences[index + 1];
      const interval = difference?.ci ? ` [${cell(difference.ci[0], '')}, ${cell(difference.ci[1], '')}]` : '';
      const verdict = isRequestNoiseOnly(difference?.note) ? 'request noise only' : (difference?.verdict ?? '—');
      return `${cell(row.values[index + 1], row.unit)}, ${cell(difference?.difference, '')}${interval}, ${verdict}`;
    }),
  ]);
  const runs = comparison.runs.map(
    (run, index) => `  ${index === 0 ? 'A' : 'B'} ${run.runId.slice(0, 8)}: ${run.label} (${run.requests} requests, ${run.status})`,
  );
  const notes = comparison.notes.map((note) => `  note: ${note}`);
  if (comparison.rows.some((row) => row.differences.some((difference) => isRequestNoiseOnly(difference?.note))))
    notes.push(
      `  note: request noise only: 95 % intervals of the request-to-request noise (a bootstrap up to ${BOOTSTRAP_MAX_SAMPLES} requests ` +
        'a run, order statistics where both runs have more). Each run is one window, so drift from run to run is not in them and no faster/slower ' +
        'verdict is given; `inferlab experiment` repeats windows in rotated order and gives one.',
    );
  return [runs.join('\n'), formatTable([header, ...rows]), ...notes].join('\n\n');
}

export const compareCommand: CommandHandler = async (args) => {
  const { values, positionals } = parseOptions(args, { db: { type: 'string' }, json: { type: 'boolean' } }, USAGE, true);
  if (positionals.length < 2)
    throw new AppError(ErrorCode.Usage, `compare needs two or more run IDs, the first the baseline\n\nUsage: ${USAGE}`);
  const container = await openCliServices(values.db, shellAccess());
  try {
    const comparison = await container.services.runs.compare(positionals);
    process.stdout.write(values.json ? `${JSON.stringify(comparison, null, 2)}\n` : `${comparisonTable(comparison)}\n`);
    return 0;
  } finally {
    await container.dispose();
  }
};
