import fs from 'node:fs';
import path from 'node:path';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { MAX_INPUT_FILE_BYTES, mib, readFileCapped } from '../core/read-capped';
import { readLinesCapped } from '../core/read-lines-capped';
import { countJsonValues } from './json-value-count';
import { parseTelemetryExport, type ParsedTelemetrySeries } from './parse-telemetry-export';
import { REQUEST_COLUMNS } from './request-columns';
import { dottedPath, MAX_IMPORTED_FIELD_BYTES, MAX_IMPORTED_JSON_DEPTH, tooDeepAt } from './json-bounds';
import { exportDocumentProblem, type ExportDocument } from './run-export-schema';
import { isRunId } from './run-id';
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
  /** Absent in exports made before function calls were measured. */
  ttfc_ms?: number | null;
  tool_call_ms?: number | null;
  tool_calls?: Record<string, unknown> | null;
  tpot_ms: number | null;
  e2e_ms: number | null;
  ttft_from_schedule_ms: number | null;
  e2e_from_schedule_ms: number | null;
  queue_ms: number | null;
  client_overhead_ms: number | null;
  decode_tokens_per_s: number | null;
  chunk_offsets_ms: number[];
  reasoning_chunk_offsets_ms: number[];
  /** Absent in exports made before it was recorded. */
  chunk_answer_chars?: number[];
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

/**
 * One request as it will be stored: its columns (REQUEST_COLUMNS), converted from the line as
 * soon as the line is checked. Fields of any shape (acceptance, server timings, block hashes)
 * are held as the JSON text they are stored as, the times as a blob, so what an import holds
 * is about the size of its file whatever the lines' shapes.
 */
export type ImportedRequestRow = Readonly<Record<string, unknown>>;

export interface ExportedRun {
  folder: string;
  manifest: ExportedManifest;
  summary: Record<string, unknown> | null;
  requests: ImportedRequestRow[];
  /** As the store keeps it; a value no sampler read (exported as null) is NaN, as it was before export. */
  telemetry: ParsedTelemetrySeries[];
}

export interface ReadRunExportOptions {
  /** Every file is held to the caller's roots by its real location, so a symlink cannot lead out of them. */
  checkFile(file: string): Promise<string>;
  /** The most bytes of each file, and of the requests held before they are stored. */
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

/**
 * Refuses a document nested deeper than any real record: the schema leaves engine, server,
 * configuration, the summary's extras and a request's timings free-form, and SQLite cannot read
 * text nested past 1000 levels, which once failed every run list.
 */
function boundNesting(file: string, line: number | null, value: unknown, name: string | null = null): void {
  const found = tooDeepAt(value, MAX_IMPORTED_JSON_DEPTH - (name === null ? 0 : 1));
  const at = found && name !== null ? [name, ...found] : found;
  if (at)
    refuse(
      file,
      line,
      dottedPath(at.slice(0, 1)) || null,
      `nests objects and arrays deeper than ${MAX_IMPORTED_JSON_DEPTH} levels (at ${dottedPath(at.slice(0, 4))}${at.length > 4 ? '…' : ''}); no run Infer Lab records does`,
    );
}

/** The manifest's free-form fields, each stored as a column that every run list reads. */
const FREE_FORM_FIELDS = ['engine', 'server', 'environment', 'configuration'] as const;

/** Holds the manifest's free-form fields to a size no real record nears, and its run id to the form Infer Lab writes. */
function checkManifestFields(file: string, manifest: ExportedManifest): void {
  if (!isRunId(manifest.run_id))
    refuse(
      file,
      null,
      'run_id',
      `is "${manifest.run_id}", not a run id as Infer Lab writes them (36 characters, such as 0b7c61d2-4f0e-4e8a-9a51-2d5e3f8c1a77): ` +
        'lists show the first 8 characters of an id, and an id of another form could stand in for another run',
    );
  for (const field of FREE_FORM_FIELDS) {
    const bytes = Buffer.byteLength(JSON.stringify(manifest[field] ?? null));
    if (bytes > MAX_IMPORTED_FIELD_BYTES)
      refuse(file, null, field, `takes ${bytes} bytes as JSON, more than the ${MAX_IMPORTED_FIELD_BYTES} an imported run may hold there`);
  }
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

/**
 * The longest request line read. The longest real ones are a long prompt with its answer and
 * a time for each streamed chunk: about 4 bytes of text and 17 of time ("12345.678901234,") per
 * generated token. A 128k-token context at its fullest (a 0.5 MB prompt and 128k tokens
 * streamed back) is about 3 MB; a 1M-token prompt (4 MB of text) leaves room for about 190k
 * streamed tokens. Twice the first, and a line parses in a fraction of a second.
 */
export const MAX_REQUEST_LINE_BYTES = 8 * 1024 * 1024;

/**
 * The most strings, objects and arrays one request line may hold. A real line holds about
 * fifty keys, a few strings and lists, the server's timings and the acceptance checks' results,
 * and one block hash per 512 prompt tokens (2,000 for a million-token prompt). A line of
 * `{},{},…` under the byte bound would otherwise parse for seconds into 30 times its size.
 */
export const MAX_REQUEST_LINE_VALUES = 100_000;

/** About what a row holds: its strings' characters and its blobs' bytes, 8 for anything else. */
function heldBytes(row: ImportedRequestRow): number {
  let bytes = 0;
  for (const value of Object.values(row)) bytes += typeof value === 'string' ? value.length : Buffer.isBuffer(value) ? value.byteLength : 8;
  return bytes;
}

/**
 * The request lines, streamed from the file and each parsed and checked on its own: a line is
 * refused before it is parsed when it is longer than MAX_REQUEST_LINE_BYTES (before it is even
 * read whole) or holds more than MAX_REQUEST_LINE_VALUES values that allocate, and each line is
 * kept as the row it will be stored as. The rows together are held to `maxBytes`; a real
 * export holds less than its file (text as text, each 17-byte time as 8 bytes). The reader
 * turns the event loop at least once per MiB read, so the service answers other calls (and a
 * cancelled page) while an import is read.
 */
async function readRequests(file: string, maxBytes: number): Promise<ImportedRequestRow[]> {
  const rows: ImportedRequestRow[] = [];
  const firstLineOfSeq = new Map<number, number>();
  let held = 0;
  const lines = readLinesCapped(file, 'the exported requests.jsonl', {
    maxLineBytes: MAX_REQUEST_LINE_BYTES,
    maxFileBytes: maxBytes,
    remedy: `A request line of an export is far shorter: ${REEXPORT}`,
  });
  for await (const { number: line, bytes } of lines) {
    if (countJsonValues(bytes, MAX_REQUEST_LINE_VALUES) > MAX_REQUEST_LINE_VALUES)
      refuse(
        file,
        line,
        null,
        `holds more than ${MAX_REQUEST_LINE_VALUES.toLocaleString('en-US')} strings, objects and arrays, and was not parsed; a request holds a few dozen, and one block hash per 512 prompt tokens`,
      );
    const content = bytes.toString('utf8');
    if (content.trim() === '') refuse(file, line, null, 'is empty; every line holds one request');
    const record = parseJsonText(file, line, content);
    conform('request', file, line, record);
    // The line's other fields are fixed by the schema; these two are stored as JSON as they come.
    boundNesting(file, line, (record as ExportedRequest).server_timings, 'server_timings');
    boundNesting(file, line, (record as ExportedRequest).acceptance, 'acceptance');
    const { seq } = record as ExportedRequest;
    const earlier = firstLineOfSeq.get(seq);
    if (earlier !== undefined) refuse(file, line, 'seq', `is ${seq}, already taken by line ${earlier}`);
    firstLineOfSeq.set(seq, line);
    const row = Object.fromEntries(REQUEST_COLUMNS.map(({ column, imported }) => [column, imported(record as ExportedRequest)]));
    held += heldBytes(row);
    if (held > maxBytes)
      refuse(file, line, null, `brings the requests read so far past the ${mib(maxBytes)} an import may hold before it is stored`);
    rows.push(row);
  }
  return rows;
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
  const maxBytes = options.maxFileBytes ?? MAX_INPUT_FILE_BYTES;
  /** A file of the folder, by its checked real location, handed to `reader`; a missing one says what a folder holds. */
  const withFile = async <T>(name: (typeof IMPORTED_FILES)[number], reader: (file: string) => Promise<T>) => {
    const file = await options.checkFile(path.join(folder, name));
    try {
      return { file, value: await reader(file) };
    } catch (error) {
      if (!(error instanceof AppError) || error.code !== ErrorCode.NotFound) throw error;
      throw new AppError(
        ErrorCode.NotFound,
        `${file}: not found. An exported run folder holds ${IMPORTED_FILES.join(', ')}; ${REEXPORT}.`,
        { file },
      );
    }
  };
  const read = async (name: (typeof IMPORTED_FILES)[number]) => {
    const cap = Math.min(maxBytes, name === 'manifest.json' || name === 'summary.json' ? DOCUMENT_BYTES : Infinity);
    const { file, value } = await withFile(name, (file) => readFileCapped(file, `the exported ${name}`, cap));
    return { file, bytes: value };
  };

  const manifestFile = await read('manifest.json');
  const manifest = parseJsonText(manifestFile.file, null, manifestFile.bytes.toString('utf8'));
  checkSchemaVersion(manifestFile.file, manifest);
  conform('manifest', manifestFile.file, null, manifest);
  boundNesting(manifestFile.file, null, manifest);
  checkManifestFields(manifestFile.file, manifest as ExportedManifest);
  const runId = (manifest as ExportedManifest).run_id;

  const summaryFile = await read('summary.json');
  const summary = parseJsonText(summaryFile.file, null, summaryFile.bytes.toString('utf8'));
  conform('summary', summaryFile.file, null, summary);
  boundNesting(summaryFile.file, null, summary);
  const summaryRunId = (summary as { run_id?: string } | null)?.run_id;
  if (summaryRunId !== undefined && summaryRunId !== runId)
    refuse(summaryFile.file, null, 'run_id', `is ${summaryRunId}, but manifest.json is run ${runId}: the files come from two runs`);

  const { value: requests } = await withFile('requests.jsonl', (file) => readRequests(file, maxBytes));

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
