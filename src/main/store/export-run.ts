import type { RunExport } from '../../shared/contract/results';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { csvLines } from './csv-cell';
import { RUN_EXPORT_SCHEMA_VERSION } from './run-export-version';
import { telemetryCsv } from './telemetry-csv';
import { parseJson, REQUEST_COLUMNS } from './request-columns';
import type { RunStore } from './run-store';
import type { RequestRow, RunRow } from './run-rows';

const CSV_COLUMNS = [
  // A row copied into a sheet beside another run's still says which run it came from.
  'run_id',
  'seq',
  'warmup',
  'group',
  'item_id',
  'conversation',
  'turn',
  'scheduled_ms',
  't0_ms',
  'ttft_ms',
  'tpot_ms',
  'e2e_ms',
  'queue_ms',
  'client_overhead_ms',
  'prompt_tokens',
  'cached_tokens',
  'output_tokens',
  'finish_reason',
  'http_status',
  'error_class',
  'accepted',
  'ttfr_ms',
  'ttfa_ms',
  'ttfc_ms',
  'tool_call_ms',
  'ttft_from_schedule_ms',
  'e2e_from_schedule_ms',
  'decode_tokens_per_s',
  'reasoning_tokens',
] as const;

/** One line of requests.jsonl: timings and outcome; text only when the run kept it. */
export function requestRecord(row: RequestRow): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  for (const { field, exported } of REQUEST_COLUMNS) {
    const value = exported(row);
    if (value !== undefined) record[field] = value;
  }
  return record;
}

export function runManifest(run: RunRow): Record<string, unknown> {
  return {
    schema_version: RUN_EXPORT_SCHEMA_VERSION,
    run_id: run.id,
    kind: run.kind,
    status: run.status,
    status_reason: run.status_reason,
    started_at: run.started_at,
    ended_at: run.ended_at,
    private: run.private === 1,
    workload: { name: run.workload_name, revision: run.workload_revision },
    model: { ref: run.model_ref, path: run.model_path, size_bytes: run.model_size_bytes, sha256: run.model_sha256 },
    engine: parseJson(run.engine_json),
    // Said at the top: a CPU measurement must not pass for a GPU one.
    gpu_offload: (parseJson(run.manifest_json) as { gpu_offload?: unknown } | null)?.gpu_offload ?? null,
    server: parseJson(run.server_json),
    environment: parseJson(run.environment_json),
    configuration: parseJson(run.manifest_json),
  };
}

/** The four export documents of a run, as text. */
export function renderRunExport(store: RunStore, idOrPrefix: string): Omit<RunExport, 'fileBase'> & { run: RunRow } {
  const run = store.findRun(idOrPrefix);
  if (!run) throw new AppError(ErrorCode.NotFound, `No run ${idOrPrefix}`);
  const rows = store.requests(run.id);
  const records = rows.map(requestRecord);
  const csvRows = records.map((record) => CSV_COLUMNS.map((column) => (column === 'run_id' ? run.id : record[column])));
  const telemetry = store.telemetry(run.id);
  return {
    run,
    manifest: `${JSON.stringify(runManifest(run), null, 2)}\n`,
    summary: `${JSON.stringify(parseJson(run.summary_json), null, 2)}\n`,
    requestsJsonl: records.map((record) => JSON.stringify(record)).join('\n') + (records.length ? '\n' : ''),
    requestsCsv: csvLines(CSV_COLUMNS, csvRows),
    telemetry: `${JSON.stringify({ schema_version: RUN_EXPORT_SCHEMA_VERSION, clock: 'ms since the run started (monotonic)', series: telemetry })}\n`,
    telemetryCsv: telemetryCsv(telemetry),
    traceJsonl: runTrace(rows),
  };
}

/**
 * The measured requests as a trace: each at its scheduled time (its send time in a closed
 * loop) from the first one, with the server's prompt and answer token counts and its block
 * hashes numbered by first appearance. Requests without hashes or counts are left out; null
 * when none has them.
 */
export function runTrace(rows: readonly RequestRow[]): string | null {
  const usable = rows
    .filter((row) => row.warmup === 0 && row.block_hashes && row.prompt_tokens !== null)
    .map((row) => ({ at: row.scheduled_ms ?? row.t0_ms, row, hashes: JSON.parse(row.block_hashes!) as string[] }))
    .sort((a, b) => a.at - b.at);
  if (usable.length === 0) return null;
  const ids = numberHashes(usable.map((entry) => entry.hashes));
  const origin = usable[0]!.at;
  return usable
    .map((entry, index) =>
      JSON.stringify({
        timestamp: Math.round(entry.at - origin),
        input_length: entry.row.prompt_tokens,
        output_length: entry.row.output_tokens ?? 0,
        hash_ids: ids[index],
      }),
    )
    .join('\n')
    .concat('\n');
}

/** Hash strings as the small whole numbers a trace uses, numbered by first appearance. */
export function numberHashes(rows: readonly (readonly string[])[]): number[][] {
  const ids = new Map<string, number>();
  return rows.map((hashes) =>
    hashes.map((hash) => {
      if (!ids.has(hash)) ids.set(hash, ids.size);
      return ids.get(hash)!;
    }),
  );
}
