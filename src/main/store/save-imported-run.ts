import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import type { Db } from './database';
import type { ExportedRun } from './read-run-export';
import { jsonOrNull } from './request-columns';

/** Where an imported run came from; kept in the run's configuration (manifest_json), which every export carries. */
export interface ImportMark {
  from: string;
  at: string;
  schema_version: number;
}

function insertStatement(db: Db, table: string, columns: readonly string[]) {
  return db.prepare(`INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map((column) => `@${column}`).join(', ')})`);
}

/**
 * Stores an exported run under its own id, all of it or nothing: the run, every request and
 * the telemetry in one transaction. A run with that id already here is refused, never doubled.
 */
export function saveImportedRun(db: Db, exported: ExportedRun, mark: ImportMark): void {
  const { manifest } = exported;
  const runValues = {
    id: manifest.run_id,
    kind: manifest.kind,
    // No process is writing it any more: a run exported mid-way stays as far as it got.
    status: manifest.status === 'running' ? 'interrupted' : manifest.status,
    status_reason: manifest.status === 'running' ? 'exported while it was still running' : manifest.status_reason,
    started_at: manifest.started_at,
    ended_at: manifest.ended_at,
    model_ref: manifest.model.ref,
    model_path: manifest.model.path,
    model_size_bytes: manifest.model.size_bytes,
    model_sha256: manifest.model.sha256,
    engine_json: JSON.stringify(manifest.engine ?? null),
    server_json: JSON.stringify(manifest.server ?? null),
    manifest_json: JSON.stringify({ ...manifest.configuration, imported: mark }),
    summary_json: jsonOrNull(exported.summary),
    workload_name: manifest.workload.name,
    workload_revision: manifest.workload.revision,
    environment_json: jsonOrNull(manifest.environment),
    private: manifest.private ? 1 : 0,
  };
  // The reader already holds each request as its columns.
  const requestRows = exported.requests.map((row) => ({ run_id: manifest.run_id, ...row }));
  const insertRun = insertStatement(db, 'runs', Object.keys(runValues));
  const insertRequest = requestRows.length ? insertStatement(db, 'requests', Object.keys(requestRows[0]!)) : null;
  const insertSeries = db.prepare('INSERT INTO telemetry_series (run_id, series, unit, points) VALUES (?, ?, ?, ?)');
  db.transaction(() => {
    if (db.prepare('SELECT 1 FROM runs WHERE id = ?').get(manifest.run_id))
      throw new AppError(
        ErrorCode.InvalidInput,
        `Run ${manifest.run_id} is already in this database; nothing was imported. ` +
          `It is the same run: compare or export the copy here, or delete it first ("inferlab runs delete ${manifest.run_id}") to import this one instead.`,
        { runId: manifest.run_id },
      );
    // Ids are typed as prefixes: an imported id that starts another run's, or that another's
    // starts (ids of other forms, imported by an older version), would make one of them
    // unreachable or let it stand in for the other.
    const sharing = db
      .prepare(
        `SELECT id FROM runs WHERE (id >= @id AND substr(id, 1, length(@id)) = @id) OR substr(@id, 1, length(id)) = id ORDER BY id LIMIT 5`,
      )
      .all({ id: manifest.run_id }) as { id: string }[];
    if (sharing.length > 0)
      throw new AppError(
        ErrorCode.InvalidInput,
        `Run ${manifest.run_id} shares the start of its id with ${sharing.map((row) => `run ${row.id}`).join(', ')} already in this database; ` +
          `nothing was imported, since a short id would name either. Delete the run here first ("inferlab runs delete ${sharing[0]!.id}") if it is not needed.`,
        { runId: manifest.run_id, sharing: sharing.map((row) => row.id) },
      );
    if (manifest.workload.revision !== null)
      // The export names the workload, not its content: the revision is kept so runs of the same workload still match.
      db.prepare(
        `INSERT INTO workloads (revision, name, source, content_json, created_at) VALUES (?, ?, 'imported', ?, ?) ON CONFLICT (revision) DO NOTHING`,
      ).run(
        manifest.workload.revision,
        manifest.workload.name ?? 'imported',
        JSON.stringify({ imported: true, name: manifest.workload.name, revision: manifest.workload.revision }),
        mark.at,
      );
    insertRun.run(runValues);
    for (const row of requestRows) insertRequest!.run(row);
    for (const { series, unit, points } of exported.telemetry)
      insertSeries.run(manifest.run_id, series, unit, Buffer.from(points.buffer, points.byteOffset, points.byteLength));
  })();
}
