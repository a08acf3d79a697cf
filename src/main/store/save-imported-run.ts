import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import type { Db } from './database';
import { telemetryForStore, type ExportedRequest, type ExportedRun } from './read-run-export';

/** Where an imported run came from; kept in the run's configuration (manifest_json), which every export carries. */
export interface ImportMark {
  from: string;
  at: string;
  schema_version: number;
}

const offsetsBlob = (offsets: readonly number[]) => Buffer.from(Float64Array.from(offsets).buffer);
const jsonOrNull = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));

function requestRow(runId: string, record: ExportedRequest): Record<string, unknown> {
  return {
    run_id: runId,
    seq: record.seq,
    warmup: record.warmup ? 1 : 0,
    group_name: record.group,
    item_id: record.item_id,
    scheduled_ms: record.scheduled_ms,
    t0_ms: record.t0_ms,
    headers_ms: record.headers_ms,
    end_ms: record.end_ms,
    ttft_ms: record.ttft_ms,
    e2e_ms: record.e2e_ms,
    tpot_ms: record.tpot_ms,
    queue_ms: record.queue_ms,
    client_overhead_ms: record.client_overhead_ms,
    output_tokens: record.output_tokens,
    output_tokens_source: record.output_tokens_source,
    prompt_tokens: record.prompt_tokens,
    cached_tokens: record.cached_tokens,
    finish_reason: record.finish_reason,
    http_status: record.http_status,
    error_class: record.error_class,
    error_message: record.error_message,
    timings_json: jsonOrNull(record.server_timings),
    chunk_offsets: offsetsBlob(record.chunk_offsets_ms),
    accepted: record.accepted === null ? null : record.accepted ? 1 : 0,
    acceptance_json: jsonOrNull(record.acceptance),
    prompt_text: record.prompt ?? null,
    output_text: record.output ?? null,
    prompt_sha256: record.prompt_sha256,
    output_sha256: record.output_sha256,
    prompt_chars: record.prompt_chars,
    output_chars: record.output_chars,
    ttfr_ms: record.ttfr_ms,
    ttfa_ms: record.ttfa_ms,
    ttft_from_schedule_ms: record.ttft_from_schedule_ms,
    e2e_from_schedule_ms: record.e2e_from_schedule_ms,
    decode_tokens_per_s: record.decode_tokens_per_s,
    // The writer stores no blob for a request that streamed no reasoning.
    reasoning_chunk_offsets: record.reasoning_chunk_offsets_ms.length ? offsetsBlob(record.reasoning_chunk_offsets_ms) : null,
    reasoning_text: record.reasoning ?? null,
    reasoning_sha256: record.reasoning_sha256,
    reasoning_chars: record.reasoning_chars,
    reasoning_tokens: record.reasoning_tokens,
    reasoning_tokens_note: record.reasoning_tokens_note,
    conversation: record.conversation,
    turn: record.turn,
    block_hashes: jsonOrNull(record.block_hashes),
  };
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
  const requestRows = exported.requests.map((record) => requestRow(manifest.run_id, record));
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
    for (const entry of telemetryForStore(exported.telemetry)) {
      const flat = Float64Array.from(entry.points.flat());
      insertSeries.run(manifest.run_id, entry.series, entry.unit, Buffer.from(flat.buffer));
    }
  })();
}
