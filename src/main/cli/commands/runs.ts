import path from 'node:path';
import type { RunListItem } from '../../../shared/contract';
import { runExportFiles } from '../../../shared/run-export-files';
import { ErrorCode } from '../../../shared/errors';
import { AppError } from '../../core/errors';
import { refuseOtherExport, writeExportFiles } from '../../core/export-folder';
import { shellAccess } from '../../services/access';
import { parseOptions, positiveInteger, type CommandHandler } from '../args';
import { openCliServices } from '../service-context';
import { columnLabel, columnsShownIn, RUN_LIST_FIGURES } from '../../../shared/metric-columns';
import { formatMs, formatNumber, formatTable } from '../format';
import { printSummary } from '../summary-table';
import { RUNS_USAGE, EXPORT_USAGE, IMPORT_USAGE } from '../usage';

/** The list's metric columns, the same as the Runs view's: from the metric table (`shows.runsList`). */
const LIST_COLUMNS = columnsShownIn('runsList');

function listFigure({ key, definition }: (typeof LIST_COLUMNS)[number], run: RunListItem): string {
  const value = RUN_LIST_FIGURES[key](run);
  if (definition.perRequest) return formatMs(value);
  return value === null ? '—' : `${formatNumber(value, definition.digits)} ${definition.unit}`;
}

/** `inferlab runs list` as a table: a run per row. */
export function runsListTable(items: readonly RunListItem[]): string {
  return formatTable([
    [
      'run',
      'started',
      'status',
      'model',
      'workload',
      'requests',
      ...LIST_COLUMNS.map(({ metric, statistic }) => columnLabel(metric, statistic)),
    ],
    ...items.map((run) => [
      run.runId.slice(0, 8),
      run.startedAt.replace('T', ' ').slice(0, 19),
      run.status + (run.statusReason ? ` (${run.statusReason.slice(0, 40)})` : '') + (run.importedFrom ? ' [imported]' : ''),
      run.model ?? '—',
      run.workload ?? run.kind,
      String(run.requests),
      ...LIST_COLUMNS.map((column) => listFigure(column, run)),
    ]),
  ]);
}

export const runsCommand: CommandHandler = async (args) => {
  const { values, positionals } = parseOptions(
    args,
    { json: { type: 'boolean' }, db: { type: 'string' }, limit: { type: 'string' } },
    RUNS_USAGE,
    true,
  );
  const [action, id] = positionals;
  if (action !== 'list' && action !== 'show' && action !== 'delete')
    throw new AppError(ErrorCode.Usage, `Unknown runs action "${action ?? ''}"\n\nUsage: ${RUNS_USAGE}`);
  if (action !== 'list' && !id) throw new AppError(ErrorCode.Usage, `runs ${action} needs a run ID\n\nUsage: ${RUNS_USAGE}`);
  const container = await openCliServices(values.db, shellAccess());
  try {
    const runs = container.services.runs;
    if (action === 'list') {
      const { items, skipped } = await runs.page({ offset: 0, limit: positiveInteger('limit', values.limit, 50) });
      // On stderr, so that --json stays one list: a run whose record cannot be read must not hide the others, nor be hidden.
      for (const { runId, reason } of skipped)
        process.stderr.write(`skipped run ${runId}: ${reason}; delete it with "inferlab runs delete ${runId}"\n`);
      if (values.json)
        process.stdout.write(
          `${JSON.stringify(
            items.map((run) => ({
              run_id: run.runId,
              kind: run.kind,
              status: run.status,
              status_reason: run.statusReason,
              started_at: run.startedAt,
              model: run.model,
              workload: run.workload,
              requests: run.requests,
              imported_from: run.importedFrom,
            })),
            null,
            2,
          )}\n`,
        );
      else process.stdout.write(`${runsListTable(items)}\n`);
    } else if (action === 'show') {
      const { summary, manifest } = await runs.get(id!);
      if (summary && !values.json) printSummary(summary);
      else process.stdout.write(`${JSON.stringify({ manifest, summary }, null, 2)}\n`);
    } else {
      if (!(await runs.remove(id!))) throw new AppError(ErrorCode.NotFound, `No run ${id} in ${container.dbPath}`);
      process.stderr.write(`deleted run ${id}\n`);
    }
    return 0;
  } finally {
    await container.dispose();
  }
};

export const exportCommand: CommandHandler = async (args) => {
  const { values, positionals } = parseOptions(
    args,
    {
      out: { type: 'string' },
      db: { type: 'string' },
      format: { type: 'string' },
      all: { type: 'boolean' },
      experiment: { type: 'string' },
      json: { type: 'boolean' },
    },
    EXPORT_USAGE,
    true,
  );
  const format = values.format ?? 'files';
  if (format !== 'files' && format !== 'parquet')
    throw new AppError(ErrorCode.Usage, `--format ${format}: use files (JSON and CSV, the default) or parquet\n\nUsage: ${EXPORT_USAGE}`);
  if (!values.out) throw new AppError(ErrorCode.Usage, `export needs --out DIR\n\nUsage: ${EXPORT_USAGE}`);
  const chosen = [positionals.length > 0, values.all === true, values.experiment !== undefined].filter(Boolean).length;
  if (positionals.length > 1 || chosen !== 1)
    throw new AppError(ErrorCode.Usage, `export needs one of: a run ID, --all, or --experiment ID\n\nUsage: ${EXPORT_USAGE}`);
  if (format === 'files' && positionals.length !== 1)
    throw new AppError(ErrorCode.Usage, `--all and --experiment export Parquet tables: add --format parquet\n\nUsage: ${EXPORT_USAGE}`);
  const container = await openCliServices(values.db, shellAccess());
  try {
    const outDir = path.resolve(values.out);
    if (format === 'parquet') {
      const written = await container.services.runs.exportParquet({
        ...(positionals[0] !== undefined ? { runId: positionals[0] } : {}),
        ...(values.experiment !== undefined ? { experimentId: values.experiment } : {}),
        folder: outDir,
      });
      if (values.json) process.stdout.write(`${JSON.stringify(written)}\n`);
      else
        process.stdout.write(
          `${formatTable([['table', 'rows', 'file'], ...written.tables.map((table) => [table.name, String(table.rows), table.file])])}\n${path.join(outDir, 'manifest.json')} (schema_version ${written.schema_version})\n`,
        );
      return 0;
    }
    const rendered = await container.services.runs.exportRun(positionals[0]!);
    await refuseOtherExport(outDir, 'run files', "Choose another folder for the run's files (--out DIR)");
    const written = await writeExportFiles(outDir, runExportFiles(rendered));
    process.stdout.write(`${written.join('\n')}\n`);
    return 0;
  } finally {
    await container.dispose();
  }
};

export const importCommand: CommandHandler = async (args) => {
  const { values, positionals } = parseOptions(args, { db: { type: 'string' }, json: { type: 'boolean' } }, IMPORT_USAGE, true);
  if (positionals.length !== 1) throw new AppError(ErrorCode.Usage, `import needs one folder\n\nUsage: ${IMPORT_USAGE}`);
  const container = await openCliServices(values.db, shellAccess());
  try {
    const imported = await container.services.runs.importRun(positionals[0]!);
    if (values.json)
      process.stdout.write(
        `${JSON.stringify({ run_id: imported.runId, requests: imported.requests, telemetry_series: imported.telemetrySeries, imported_from: imported.importedFrom })}\n`,
      );
    else
      process.stdout.write(
        `imported run ${imported.runId} (${imported.requests} requests, ${imported.telemetrySeries} telemetry series) from ${imported.importedFrom} into ${container.dbPath}\n`,
      );
    return 0;
  } finally {
    await container.dispose();
  }
};
