import type { ImportedRun, ParquetExport, RunDetail, RunListItem, SkippedRun } from '../../shared/contract';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { runManifest } from '../store/export-run';
import type { ParquetScope } from '../store/parquet-export';
import { RUN_EXPORT_SCHEMA_VERSION } from '../store/run-export-version';
import type { RunStore } from '../store/run-store';
import type { RunHead, RunHeads } from '../store/run-rows';
import { saveImportedRun } from '../store/save-imported-run';
import { parquetFolder } from './access';
import { storedRunSummary } from './compare-runs';
import type { WorkServiceDeps } from './service-deps';

/** A stored run as the run lists show it. */
export function listItem(run: RunHead): RunListItem {
  return {
    runId: run.id,
    startedAt: run.started_at,
    status: run.status,
    statusReason: run.status_reason,
    model: run.model_ref,
    quantization: run.model_file_type ?? (run.model_ref?.startsWith('demo:') ? run.model_ref.slice(5).toUpperCase() : null),
    engine:
      run.engine_origin === 'endpoint'
        ? 'endpoint'
        : run.has_engine
          ? `llama.cpp${run.engine_backend ? ` · ${run.engine_backend}` : ''}`
          : null,
    workload: run.workload_name,
    kind: run.kind,
    requests: run.request_count,
    ttftP50: run.ttft_p50,
    outputTokensPerS: run.output_tokens_per_s,
    importedFrom: run.imported_from,
  };
}

/** A run whose stored record cannot be read: named, with the one thing that still works on it. */
function unreadableRunError(runId: string, reason: string): AppError {
  return new AppError(
    ErrorCode.InvalidInput,
    `Run ${runId} cannot be read: ${reason}. Delete it with "inferlab runs delete ${runId}" (or from the Runs view).`,
    { runId },
  );
}

/** A list of runs, and a line for each run it left out because its record cannot be read. */
export function listedRuns({ heads, unreadable }: RunHeads): { items: RunListItem[]; skipped: SkippedRun[] } {
  return { items: heads.map(listItem), skipped: unreadable.map(({ id, reason }) => ({ runId: id, reason })) };
}

/** One stored run with its summary, manifest, telemetry and each measured request's TTFT by send time. */
export function runDetail(runs: RunStore, runId: string): RunDetail {
  const run = runs.findRun(runId);
  if (!run) throw new AppError(ErrorCode.NotFound, `No run ${runId}`);
  const { heads, unreadable } = runs.readRunHeads(1, run.id);
  if (!heads[0]) throw unreadableRunError(run.id, unreadable[0]?.reason ?? 'it could not be read');
  const marks = runs
    .requestsForSummary(run.id)
    .filter((row) => row.warmup === 0)
    .map((row): [number, number | null] => [row.t0_ms, row.ttft_ms]);
  return {
    item: listItem(heads[0]),
    summary: storedRunSummary(run.summary_json),
    manifest: runManifest(run),
    telemetry: runs.telemetry(run.id),
    requestMarks: marks,
  };
}

/** The store, one run or one experiment as Parquet tables, in a folder inside the results roots. */
export async function exportParquetOf(
  deps: WorkServiceDeps,
  request: { runId?: string; experimentId?: string; folder?: string | null },
): Promise<ParquetExport> {
  if (request.runId && request.experimentId)
    throw new AppError(ErrorCode.InvalidInput, 'exportParquet takes a run or an experiment (or neither, for every run), not both');
  const scope: ParquetScope = request.runId
    ? { runId: request.runId }
    : request.experimentId
      ? { experimentId: request.experimentId }
      : { all: true };
  // Loaded when asked for: the Parquet writer costs every command that reaches this module 60 ms to load.
  const { exportParquet } = await import('../store/parquet-export');
  return exportParquet(deps.store.db, deps.store.runs, scope, await parquetFolder(deps.access.paths, request.folder ?? null));
}

/** An exported run folder back into this database, under its own id. */
export async function importRunFolder(deps: WorkServiceDeps, folder: string): Promise<ImportedRun> {
  // The folder and each file in it by real location: a symlink inside the roots cannot lead a request out of them.
  const within = (file: string) => deps.access.paths.check(file, 'results');
  // Loaded when asked for, with the schema checks and ajv behind them.
  const { readRunExport } = await import('../store/read-run-export');
  const exported = await readRunExport(await within(folder), { checkFile: within });
  saveImportedRun(deps.store.db, exported, {
    from: exported.folder,
    at: new Date().toISOString(),
    schema_version: RUN_EXPORT_SCHEMA_VERSION,
  });
  return {
    runId: exported.manifest.run_id,
    requests: exported.requests.length,
    telemetrySeries: exported.telemetry.length,
    importedFrom: exported.folder,
  };
}
