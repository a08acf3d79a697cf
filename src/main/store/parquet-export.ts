import fs from 'node:fs';
import path from 'node:path';
import type { DecisionRecord, ParquetExport } from '../../shared/contract/results';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { refuseOtherExport } from '../core/export-folder';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../core/private-files';
import { schemaVersion, type Db } from './database';
import { ExperimentStore } from './experiment-store';
import { ParquetTableFile, type ParquetColumn } from './parquet-table';
import {
  CHUNK_COLUMNS,
  chunkRows,
  CONDITION_COLUMNS,
  DECISION_COLUMNS,
  EXPERIMENT_COLUMNS,
  REQUEST_PARQUET_COLUMNS,
  RUN_COLUMNS,
  runTableRow,
  TELEMETRY_COLUMNS,
  VERDICT_COLUMNS,
  verdictRows,
  type ConditionTableRow,
  type ExperimentTableRow,
  type TelemetryTableRow,
} from './parquet-tables';
import type { RunStore } from './run-store';
import { decodeChunkOffsets, type RequestRow, type RunRow } from './run-rows';

/** Raised when a table's columns change in a way a reader must know about. */
export const PARQUET_EXPORT_SCHEMA_VERSION = 1;

export const PARQUET_TABLES = ['runs', 'requests', 'chunks', 'telemetry', 'experiments', 'conditions', 'verdicts', 'decisions'] as const;
export type ParquetTableName = (typeof PARQUET_TABLES)[number];

/** What an export holds: the whole store, one run, or one experiment with its runs and decisions. */
export type ParquetScope = { all: true } | { runId: string } | { experimentId: string };

interface Selection {
  scope: string;
  runIds: string[];
  experiments: ExperimentTableRow[];
  decisions: DecisionRecord[];
}

function select(db: Db, runs: RunStore, scope: ParquetScope): Selection {
  // Oldest first, as every other table is ordered.
  const decisions = (): DecisionRecord[] => new ExperimentStore(db).decisions().reverse();
  const experimentsWhere = (where: string, ...values: string[]) =>
    db
      .prepare(`SELECT id, kind, status, created_at, protocol_json, result_json FROM experiments ${where} ORDER BY created_at`)
      .all(...values) as ExperimentTableRow[];
  if ('all' in scope) {
    const runIds = (db.prepare('SELECT id FROM runs ORDER BY started_at, id').all() as { id: string }[]).map((row) => row.id);
    return { scope: 'all', runIds, experiments: experimentsWhere(''), decisions: decisions() };
  }
  if ('runId' in scope) {
    const run = runs.findRun(scope.runId);
    if (!run) throw new AppError(ErrorCode.NotFound, `No run ${scope.runId}`);
    return { scope: `run ${run.id}`, runIds: [run.id], experiments: [], decisions: [] };
  }
  const matches = experimentsWhere("WHERE id = ? OR id LIKE ? || '%'", scope.experimentId, scope.experimentId);
  const experiment = matches.find((row) => row.id === scope.experimentId) ?? (matches.length === 1 ? matches[0] : undefined);
  if (!experiment)
    throw new AppError(
      ErrorCode.NotFound,
      matches.length > 1
        ? `${scope.experimentId} names ${matches.length} experiments; give more of the id`
        : `No experiment ${scope.experimentId}`,
    );
  const runIds = (
    db.prepare('SELECT DISTINCT run_id FROM experiment_runs WHERE experiment_id = ? ORDER BY run_id').all(experiment.id) as {
      run_id: string;
    }[]
  ).map((row) => row.run_id);
  return {
    scope: `experiment ${experiment.id}`,
    runIds,
    experiments: [experiment],
    decisions: decisions().filter((decision) => decision.experiment_id === experiment.id),
  };
}

/**
 * Writes the chosen part of the store as one Parquet file per table into `folder`, a run at a
 * time (each run's rows become row groups), with the schema version in each file's metadata
 * and in manifest.json. Every file is written under a temporary name and renamed once all are
 * whole; a failure before then removes what this export started and leaves earlier files of the
 * same name alone. A folder that holds another kind of export's manifest.json is refused.
 */
export async function exportParquet(db: Db, runs: RunStore, scope: ParquetScope, folder: string): Promise<ParquetExport> {
  const selection = select(db, runs, scope);
  // A new folder is owner-only, as each file is: the requests table carries prompts and answers.
  await fs.promises.mkdir(folder, { recursive: true, mode: PRIVATE_DIR_MODE });
  await refuseOtherExport(folder, 'Parquet tables', 'Choose another folder for the Parquet tables (--out DIR)');
  const metadata = (table: ParquetTableName) => ({
    'inferlab.schema_version': String(PARQUET_EXPORT_SCHEMA_VERSION),
    'inferlab.table': table,
    'inferlab.database_schema_version': String(schemaVersion(db)),
    'inferlab.scope': selection.scope,
  });
  const files = await openTables(folder, metadata);
  const manifestPartial = path.join(folder, 'manifest.json.partial');
  try {
    for (const runId of selection.runIds) {
      const run = runs.getRun(runId);
      if (!run) continue; // deleted since the selection was read
      await writeRun(files, run, runs.requests(run.id), runs.telemetry(run.id));
    }
    await files.experiments.append(selection.experiments);
    const conditionsOf = db.prepare(
      'SELECT experiment_id, condition, window, run_id FROM experiment_runs WHERE experiment_id = ? ORDER BY condition, window',
    );
    const conditionRows = selection.experiments.flatMap((experiment) => conditionsOf.all(experiment.id) as ConditionTableRow[]);
    await files.conditions.append(conditionRows);
    await files.verdicts.append(selection.experiments.flatMap(verdictRows));
    await files.decisions.append(selection.decisions);
    const tables: ParquetExport['tables'] = [];
    for (const name of PARQUET_TABLES) tables.push({ name, file: path.join(folder, `${name}.parquet`), rows: await files[name].close() });
    const manifest = {
      schema_version: PARQUET_EXPORT_SCHEMA_VERSION,
      exported_at: new Date().toISOString(),
      scope: selection.scope,
      tables,
    };
    await fs.promises.rm(manifestPartial, { force: true });
    await fs.promises.writeFile(manifestPartial, `${JSON.stringify(manifest, null, 2)}\n`, { flag: 'wx', mode: PRIVATE_FILE_MODE });
    for (const name of PARQUET_TABLES) await files[name].publish();
    await fs.promises.rename(manifestPartial, path.join(folder, 'manifest.json'));
    return { folder, schema_version: PARQUET_EXPORT_SCHEMA_VERSION, tables };
  } catch (error) {
    await Promise.all([
      ...Object.values(files).map((file) => file.discard()),
      fs.promises.rm(manifestPartial, { force: true }).catch(() => {}),
    ]);
    throw error;
  }
}

/** Every table's file, opened under its temporary name; a failure to open one drops those already opened. */
async function openTables(folder: string, metadata: (table: ParquetTableName) => Record<string, string>) {
  const opened: ParquetTableFile<never>[] = [];
  const open = async <Row>(table: ParquetTableName, columns: readonly ParquetColumn<Row>[]) => {
    const file = await ParquetTableFile.create(path.join(folder, `${table}.parquet`), columns, metadata(table));
    opened.push(file as ParquetTableFile<never>);
    return file;
  };
  try {
    return {
      runs: await open('runs', RUN_COLUMNS),
      requests: await open('requests', REQUEST_PARQUET_COLUMNS),
      chunks: await open('chunks', CHUNK_COLUMNS),
      telemetry: await open('telemetry', TELEMETRY_COLUMNS),
      experiments: await open('experiments', EXPERIMENT_COLUMNS),
      conditions: await open('conditions', CONDITION_COLUMNS),
      verdicts: await open('verdicts', VERDICT_COLUMNS),
      decisions: await open('decisions', DECISION_COLUMNS),
    };
  } catch (error) {
    await Promise.all(opened.map((file) => file.discard()));
    throw error;
  }
}

type TableFiles = {
  runs: ParquetTableFile<ReturnType<typeof runTableRow>>;
  requests: ParquetTableFile<{ runId: string; row: RequestRow }>;
  chunks: ParquetTableFile<ReturnType<typeof chunkRows>[number]>;
  telemetry: ParquetTableFile<TelemetryTableRow>;
};

async function writeRun(files: TableFiles, run: RunRow, requests: readonly RequestRow[], telemetry: ReturnType<RunStore['telemetry']>) {
  await files.runs.append([runTableRow(run)]);
  await files.requests.append(requests.map((row) => ({ runId: run.id, row })));
  await files.chunks.append(
    requests.flatMap((row) =>
      chunkRows(run.id, row.seq, decodeChunkOffsets(row.chunk_offsets), decodeChunkOffsets(row.reasoning_chunk_offsets ?? null)),
    ),
  );
  await files.telemetry.append(
    telemetry.flatMap(({ series, unit, points }) => points.map(([tMs, value]) => ({ runId: run.id, series, unit, tMs, value }))),
  );
}
