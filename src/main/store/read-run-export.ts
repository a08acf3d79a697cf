import fs from 'node:fs';
import path from 'node:path';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { MAX_INPUT_FILE_BYTES, readFileCapped } from '../core/read-capped';
import { parseTelemetryExport, type ParsedTelemetrySeries } from './parse-telemetry-export';
import { exportDocumentProblem, type ExportDocument } from './run-export-schema';
import { RUN_EXPORT_SCHEMA_VERSION } from './run-export-version';

/** The files import reads; the CSVs and trace are derived from these and are not needed. */
export const IMPORTED_FILES = ['manifest.json', 'summary.json', 'requests.jsonl', 'telemetry.json'] as const;

export interface ExportedManifest {
  schema_version: number;
  run_id: string;
  kind: string;
  status: 'running' | 'completed' | 'aborted' | 'interrupted' | 'failed';
  status_reason: string | null;
  started_at: string;
  ended_at: string | null;
  private: boolean;
  workload: { name: string | null; revision: string | null };
  model: { ref: string | null; path: string | null; size_bytes: number | null; sha256: string | null };
  engine: unknown;
  server: unknown;
  environment: unknown;
  configuration: Record<string, unknown>;
}

/** One line of requests.jsonl, as `requestRecord` writes it. */
export interface ExportedRequest {
  seq: number;
  warmup: boolean;
  group: string | null;
  item_id: string | null;
  conversation: number | null;
  turn: number | null;
  block_hashes: string[] | null;
  scheduled_ms: number | null;
  t0_ms: number;
  headers_ms: number | null;
  end_ms: number | null;
  ttft_ms: number | null;
  ttfr_ms: number | null;
  ttfa_ms: number | null;
  tpot_ms: number | null;
  e2e_ms: number | null;
  ttft_from_schedule_ms: number | null;
  e2e_from_schedule_ms: number | null;
  queue_ms: number | null;
  client_overhead_ms: number | null;
  decode_tokens_per_s: number | null;
  chunk_offsets_ms: number[];
  reasoning_chunk_offsets_ms: number[];
  reasoning_tokens: number | null;
  reasoning_tokens_note: string | null;
  reasoning_sha256: string | null;
  reasoning_chars: number | null;
  prompt_tokens: number | null;
  cached_tokens: number | null;
  output_tokens: number | null;
  output_tokens_source: string | null;
  finish_reason: string | null;
  http_status: number | null;
  error_class: string | null;
  error_message: string | null;
  server_timings: Record<string, unknown> | null;
  accepted: boolean | null;
  acceptance: unknown;
  prompt_sha256: string | null;
  output_sha256: string | null;
  prompt_chars: number | null;
  output_chars: number | null;
  prompt?: string;
  output?: string;
  reasoning?: string;
}

export interface ExportedRun {
  folder: string;
  manifest: ExportedManifest;
  summary: Record<string, unknown> | null;
  requests: ExportedRequest[];
  /** As the store keeps it; a value no sampler read (exported as null) is NaN, as it was before export. */
  telemetry: ParsedTelemetrySeries[];
}

export interface ReadRunExportOptions {
  /** Every file is held to the caller's roots by its real location, so a symlink cannot lead out of them. */
  checkFile(file: string): Promise<string>;
  maxFileBytes?: number;
}

/** manifest.json and summary.json are parsed in one piece; real ones are kilobytes. */
const DOCUMENT_BYTES = 16 * 1024 * 1024;

const REEXPORT = 'Export the run again with "inferlab export ID --out DIR" and import that folder';

function refuse(file: string, line: number | null, field: string | null, problem: string, remedy = REEXPORT): never {
  const where = `${file}${line === null ? '' : `:${line}`}`;
  throw new AppError(ErrorCode.InvalidInput, `${where}: ${field ? `field "${field}" ` : ''}${problem}. ${remedy}.`, {
    file,
    line,
    field,
  });
}

function parseJsonText(file: string, line: number | null, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    return refuse(file, line, null, `is not valid JSON (${(error as Error).message})`);
  }
}

function conform(document: ExportDocument, file: string, line: number | null, value: unknown): void {
  const problem = exportDocumentProblem(document, value);
  if (problem) refuse(file, line, problem.field || null, problem.message);
}

/** Refuses a version this reader does not know before anything else is read as that version. */
function checkSchemaVersion(file: string, document: unknown): void {
  const version = (document as { schema_version?: unknown } | null)?.schema_version;
  if (version === undefined)
    refuse(
      file,
      null,
      'schema_version',
      'is missing: the files come from an Infer Lab that exported no version, or are not a run export',
      `Export the run again with this version of Infer Lab ("inferlab export ID --out DIR")`,
    );
  if (version === RUN_EXPORT_SCHEMA_VERSION) return;
  if (typeof version === 'number' && Number.isInteger(version) && version > RUN_EXPORT_SCHEMA_VERSION)
    refuse(
      file,
      null,
      'schema_version',
      `is ${version}, newer than this Infer Lab reads (${RUN_EXPORT_SCHEMA_VERSION})`,
      'Update Infer Lab to a version that reads it, then import again',
    );
  refuse(
    file,
    null,
    'schema_version',
    `is ${JSON.stringify(version)}, not a version this Infer Lab knows (it reads ${RUN_EXPORT_SCHEMA_VERSION})`,
    'Import a folder written by "inferlab export"',
  );
}

/** Request lines checked between two turns of the event loop: a few milliseconds of parsing and schema checks. */
const LINES_PER_TURN = 2000;

/**
 * The request lines, each parsed and checked on its own. A full export may hold hundreds of
 * megabytes of them, so the work yields to the event loop every LINES_PER_TURN lines: the
 * service answers other calls (and a cancelled page) while an import is read.
 */
async function parseRequests(file: string, text: string): Promise<ExportedRequest[]> {
  const requests: ExportedRequest[] = [];
  const firstLineOfSeq = new Map<number, number>();
  let start = 0;
  let line = 0;
  // The file ends with a newline; only that final empty piece is not a line.
  while (start < text.length) {
    const end = text.indexOf('\n', start);
    const content = text.slice(start, end === -1 ? text.length : end);
    start = end === -1 ? text.length : end + 1;
    line++;
    if (content.trim() === '') refuse(file, line, null, 'is empty; every line holds one request');
    const record = parseJsonText(file, line, content);
    conform('request', file, line, record);
    const { seq } = record as ExportedRequest;
    const earlier = firstLineOfSeq.get(seq);
    if (earlier !== undefined) refuse(file, line, 'seq', `is ${seq}, already taken by line ${earlier}`);
    firstLineOfSeq.set(seq, line);
    requests.push(record as ExportedRequest);
    if (line % LINES_PER_TURN === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  return requests;
}

/**
 * Reads and checks an exported run folder: every file against the shipped schema, every
 * request line on its own, the version first. Nothing is written; a problem is refused naming
 * the file, the line and the field.
 */
export async function readRunExport(folder: string, options: ReadRunExportOptions): Promise<ExportedRun> {
  let stat: fs.Stats;
  try {
    stat = await fs.promises.stat(folder);
  } catch {
    throw new AppError(ErrorCode.NotFound, `${folder}: no such folder. Name the folder "inferlab export ID --out DIR" wrote.`);
  }
  if (!stat.isDirectory())
    throw new AppError(
      ErrorCode.InvalidInput,
      `${folder}: is a file, not a folder. Name the folder "inferlab export ID --out DIR" wrote (it holds ${IMPORTED_FILES.join(', ')}).`,
    );
  const read = async (name: (typeof IMPORTED_FILES)[number]) => {
    const file = await options.checkFile(path.join(folder, name));
    const cap = Math.min(
      options.maxFileBytes ?? MAX_INPUT_FILE_BYTES,
      name === 'manifest.json' || name === 'summary.json' ? DOCUMENT_BYTES : Infinity,
    );
    try {
      return { file, bytes: await readFileCapped(file, `the exported ${name}`, cap) };
    } catch (error) {
      if (!(error instanceof AppError) || error.code !== ErrorCode.NotFound) throw error;
      throw new AppError(
        ErrorCode.NotFound,
        `${file}: not found. An exported run folder holds ${IMPORTED_FILES.join(', ')}; ${REEXPORT}.`,
        { file },
      );
    }
  };

  const manifestFile = await read('manifest.json');
  const manifest = parseJsonText(manifestFile.file, null, manifestFile.bytes.toString('utf8'));
  checkSchemaVersion(manifestFile.file, manifest);
  conform('manifest', manifestFile.file, null, manifest);
  const runId = (manifest as ExportedManifest).run_id;

  const summaryFile = await read('summary.json');
  const summary = parseJsonText(summaryFile.file, null, summaryFile.bytes.toString('utf8'));
  conform('summary', summaryFile.file, null, summary);
  const summaryRunId = (summary as { run_id?: string } | null)?.run_id;
  if (summaryRunId !== undefined && summaryRunId !== runId)
    refuse(summaryFile.file, null, 'run_id', `is ${summaryRunId}, but manifest.json is run ${runId}: the files come from two runs`);

  const requestsFile = await read('requests.jsonl');
  const requests = await parseRequests(requestsFile.file, requestsFile.bytes.toString('utf8'));

  const telemetryFile = await read('telemetry.json');
  const telemetry = await readTelemetry(telemetryFile.file, telemetryFile.bytes);

  return {
    folder,
    manifest: manifest as ExportedManifest,
    summary: summary as Record<string, unknown> | null,
    requests,
    telemetry,
  };
}

/** telemetry.json, parsed off the service's thread and checked: the version, the schema, every point, one name per series. */
async function readTelemetry(file: string, bytes: Buffer): Promise<ParsedTelemetrySeries[]> {
  const parsed = await parseTelemetryExport(bytes);
  if (!parsed.ok) refuse(file, null, null, `is not valid JSON (${parsed.invalidJson})`);
  checkSchemaVersion(file, parsed.document);
  conform('telemetry', file, null, parsed.document);
  if (parsed.pointProblem) refuse(file, null, parsed.pointProblem.field, parsed.pointProblem.message);
  const seriesNames = new Set<string>();
  return (parsed.document as { series: { series: string; unit: string }[] }).series.map(({ series, unit }, index) => {
    if (seriesNames.has(series)) refuse(file, null, `series[${index}].series`, `is "${series}", which an earlier series already is`);
    seriesNames.add(series);
    return { series, unit, points: parsed.points[index]! };
  });
}
