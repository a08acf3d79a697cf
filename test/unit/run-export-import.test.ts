import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/main/store/database';
import { requestRecord, renderRunExport } from '../../src/main/store/export-run';
import { readRunExport, type ExportedRequest } from '../../src/main/store/read-run-export';
import { REQUEST_COLUMNS } from '../../src/main/store/request-columns';
import { exportDocumentProblem, runExportSchemaFile } from '../../src/main/store/run-export-schema';
import { RUN_EXPORT_SCHEMA_VERSION } from '../../src/main/store/run-export-version';
import { RunStore } from '../../src/main/store/run-store';
import type { RequestRow } from '../../src/main/store/run-rows';
import { saveImportedRun } from '../../src/main/store/save-imported-run';
import { storeSampleRun, writeRunExport } from '../support/stored-run';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();
const anywhere = { checkFile: async (file: string) => path.resolve(file) };

function exportedSample() {
  const dir = tempDir();
  const db = openDatabase(path.join(dir, 'source.db'));
  const runs = new RunStore(db);
  const runId = storeSampleRun(runs);
  const folder = writeRunExport(runs, runId, path.join(dir, 'export'));
  return { dir, db, runs, runId, folder };
}

async function importInto(dbFile: string, folder: string) {
  const db = openDatabase(dbFile);
  const exported = await readRunExport(folder, anywhere);
  saveImportedRun(db, exported, { from: folder, at: '2026-01-01T00:00:00.000Z', schema_version: RUN_EXPORT_SCHEMA_VERSION });
  return { db, runs: new RunStore(db), exported };
}

const readJson = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
const jsonLines = (file: string) =>
  fs
    .readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('the run export schema', () => {
  it('ships as a resource and describes every file of a real export, each carrying the one schema_version', async () => {
    expect(fs.existsSync(runExportSchemaFile())).toBe(true);
    const { folder } = exportedSample();
    const manifest = readJson(path.join(folder, 'manifest.json'));
    const telemetry = readJson(path.join(folder, 'telemetry.json'));
    expect(manifest.schema_version).toBe(RUN_EXPORT_SCHEMA_VERSION);
    expect(telemetry.schema_version).toBe(RUN_EXPORT_SCHEMA_VERSION);
    expect(exportDocumentProblem('manifest', manifest)).toBeNull();
    expect(exportDocumentProblem('summary', readJson(path.join(folder, 'summary.json')))).toBeNull();
    const summary = readJson(path.join(folder, 'summary.json'));
    expect(exportDocumentProblem('summary', { ...summary, metrics: { ...(summary.metrics as object), ttft_ms: undefined } })).toEqual({
      field: 'metrics.ttft_ms',
      message: 'is missing',
    });
    expect(
      exportDocumentProblem('summary', {
        ...summary,
        groups: { chat: { ...(summary.groups as { chat: object }).chat, requests: { attempted: -1, completed: 0, failed: 0 } } },
      }),
    ).toMatchObject({
      field: 'groups.chat.requests.attempted',
    });
    expect(exportDocumentProblem('summary', { legacy: 'one request', ttft_ms: 3 })).toBeNull();
    expect(exportDocumentProblem('telemetry', telemetry)).toBeNull();
    const lines = jsonLines(path.join(folder, 'requests.jsonl'));
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(exportDocumentProblem('request', line)).toBeNull();
  });

  it('rejects a broken file naming the field', async () => {
    const { folder } = exportedSample();
    const manifest = readJson(path.join(folder, 'manifest.json'));
    const line = jsonLines(path.join(folder, 'requests.jsonl'))[1]!;
    expect(exportDocumentProblem('manifest', { ...manifest, run_id: undefined })).toEqual({ field: 'run_id', message: 'is missing' });
    expect(exportDocumentProblem('manifest', { ...manifest, model: { ...(manifest.model as object), sha256: 'xyz' } })).toMatchObject({
      field: 'model.sha256',
      message: expect.stringMatching(/pattern/),
    });
    expect(exportDocumentProblem('request', { ...line, ttft_ms: 'fast' })).toEqual({ field: 'ttft_ms', message: 'must be number or null' });
    expect(exportDocumentProblem('request', { ...line, chunk_offsets_ms: [1, 'x'] })).toEqual({
      field: 'chunk_offsets_ms[1]',
      message: 'must be number',
    });
    expect(exportDocumentProblem('request', { ...line, surprise: 1 })).toEqual({
      field: 'surprise',
      message: 'is not a field of this version',
    });
    expect(
      exportDocumentProblem('telemetry', { schema_version: 1, clock: 'ms', series: [{ series: 's', unit: 'u', points: [[1]] }] }),
    ).toEqual({
      field: 'series[0].points[0]',
      message: 'must NOT have fewer than 2 items',
    });
  });
});

describe('CSV exports', () => {
  it('carry the run id on every request row, and the telemetry as one row per sample with a column per field', async () => {
    const { runs, runId, folder } = exportedSample();
    const [header, ...rows] = fs.readFileSync(path.join(folder, 'requests.csv'), 'utf8').trim().split('\n');
    expect(header!.split(',').slice(0, 3)).toEqual(['run_id', 'seq', 'warmup']);
    expect(rows).toHaveLength(3);
    for (const row of rows) expect(row.startsWith(`${runId},`)).toBe(true);
    expect(renderRunExport(runs, runId).telemetryCsv).toBe(
      [
        't_ms,kind,gpu,cpu_pct,memory_used_MiB,utilization_pct',
        '0,gpu,0,,512,10',
        '0,server,,95.5,,',
        '250,gpu,0,,640.5,',
        '250,server,,101,,',
        '',
      ].join('\n'),
    );
  });
});

describe('import', () => {
  it('brings every request, the telemetry, the manifest facts and the summary back under the same id, marked imported', async () => {
    const { runs: source, runId, folder, dir } = exportedSample();
    const { runs: target } = await importInto(path.join(dir, 'target.db'), folder);
    expect(target.requests(runId).map(requestRecord)).toEqual(source.requests(runId).map(requestRecord));
    // Timings are the exact doubles that were measured, not rounded on the way.
    expect(target.chunkOffsets(runId, 1)).toEqual(source.chunkOffsets(runId, 1));
    expect(target.telemetry(runId).map((series) => ({ ...series, points: JSON.stringify(series.points) }))).toEqual(
      source.telemetry(runId).map((series) => ({ ...series, points: JSON.stringify(series.points) })),
    );
    const original = source.getRun(runId)!;
    const copy = target.getRun(runId)!;
    for (const field of [
      'kind',
      'status',
      'started_at',
      'ended_at',
      'model_ref',
      'model_sha256',
      'model_size_bytes',
      'engine_json',
      'server_json',
      'environment_json',
      'workload_name',
      'workload_revision',
      'summary_json',
    ] as const)
      expect(copy[field], field).toEqual(original[field]);
    expect(JSON.parse(copy.manifest_json)).toEqual({
      ...JSON.parse(original.manifest_json),
      imported: { from: folder, at: '2026-01-01T00:00:00.000Z', schema_version: RUN_EXPORT_SCHEMA_VERSION },
    });
    expect(target.listRunHeads(10)[0]).toMatchObject({ id: runId, imported_from: folder, request_count: 3 });
    // Exported again, the copy says the same as the original (its configuration also says where it came from).
    const again = renderRunExport(target, runId);
    const first = renderRunExport(source, runId);
    expect(again.requestsJsonl).toBe(first.requestsJsonl);
    expect(again.requestsCsv).toBe(first.requestsCsv);
    expect(again.telemetryCsv).toBe(first.telemetryCsv);
    expect(again.summary).toBe(first.summary);
  });

  it('keeps a private run private: hashes and lengths come back, no text', async () => {
    const dir = tempDir();
    const source = new RunStore(openDatabase(path.join(dir, 'source.db')));
    const runId = storeSampleRun(source, { private: true });
    const folder = writeRunExport(source, runId, path.join(dir, 'export'));
    const { db, runs: target } = await importInto(path.join(dir, 'target.db'), folder);
    expect(target.getRun(runId)!.private).toBe(1);
    expect(target.requests(runId).map(requestRecord)).toEqual(source.requests(runId).map(requestRecord));
    expect(
      db
        .prepare(
          'SELECT COUNT(*) AS n FROM requests WHERE prompt_text IS NOT NULL OR output_text IS NOT NULL OR reasoning_text IS NOT NULL',
        )
        .get(),
    ).toEqual({
      n: 0,
    });
    expect(target.requests(runId)[1]!.prompt_sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses a run id that is already in the database, and imports nothing twice', async () => {
    const { db, runId, folder } = exportedSample();
    const readBack = await readRunExport(folder, anywhere);
    expect(() => saveImportedRun(db, readBack, { from: folder, at: 'now', schema_version: 1 })).toThrow(
      new RegExp(`Run ${runId} is already in this database; nothing was imported.*runs delete ${runId}`),
    );
    expect(new RunStore(db).countRequests(runId)).toBe(3);
  });

  it('leaves no half-imported run when a write fails part-way', async () => {
    const { dir, folder, runId } = exportedSample();
    const exported = await readRunExport(folder, anywhere);
    // Two requests with one seq: the second insert fails after the run and the first request were written.
    exported.requests.push({ ...exported.requests[0]! });
    const db = openDatabase(path.join(dir, 'target.db'));
    expect(() => saveImportedRun(db, exported, { from: folder, at: 'now', schema_version: 1 })).toThrow(/UNIQUE|PRIMARY KEY/);
    expect(db.prepare('SELECT COUNT(*) AS n FROM runs').get()).toEqual({ n: 0 });
    expect(db.prepare('SELECT COUNT(*) AS n FROM requests WHERE run_id = ?').get(runId)).toEqual({ n: 0 });
    expect(db.prepare('SELECT COUNT(*) AS n FROM workloads').get()).toEqual({ n: 0 });
  });

  it('refuses a newer or unknown schema_version, naming the file and what to do', async () => {
    const { folder } = exportedSample();
    const manifestFile = path.join(folder, 'manifest.json');
    const manifest = readJson(manifestFile);
    fs.writeFileSync(manifestFile, JSON.stringify({ ...manifest, schema_version: RUN_EXPORT_SCHEMA_VERSION + 1 }));
    await expect(readRunExport(folder, anywhere)).rejects.toThrow(
      `${manifestFile}: field "schema_version" is ${RUN_EXPORT_SCHEMA_VERSION + 1}, newer than this Infer Lab reads (${RUN_EXPORT_SCHEMA_VERSION}). Update Infer Lab to a version that reads it, then import again.`,
    );
    fs.writeFileSync(manifestFile, JSON.stringify({ ...manifest, schema_version: undefined }));
    await expect(readRunExport(folder, anywhere)).rejects.toThrow(/field "schema_version" is missing.*Export the run again/);
    fs.writeFileSync(manifestFile, JSON.stringify({ ...manifest, schema_version: 'one' }));
    await expect(readRunExport(folder, anywhere)).rejects.toThrow(/field "schema_version" is "one", not a version this Infer Lab knows/);
  });

  it('refuses a malformed request line naming the file, the line and the field', async () => {
    const { folder } = exportedSample();
    const file = path.join(folder, 'requests.jsonl');
    const lines = fs.readFileSync(file, 'utf8').trim().split('\n');
    fs.writeFileSync(file, [lines[0], '{"seq": 1,', lines[2]].join('\n'));
    await expect(readRunExport(folder, anywhere)).rejects.toThrow(new RegExp(`^${file}:2: is not valid JSON .*Export the run again`));
    const broken = { ...JSON.parse(lines[2]!), e2e_ms: '12' };
    fs.writeFileSync(file, [lines[0], lines[1], JSON.stringify(broken)].join('\n'));
    await expect(readRunExport(folder, anywhere)).rejects.toThrow(`${file}:3: field "e2e_ms" must be number or null.`);
    fs.writeFileSync(file, [lines[0], lines[1], lines[1]].join('\n'));
    await expect(readRunExport(folder, anywhere)).rejects.toThrow(`${file}:3: field "seq" is 1, already taken by line 2.`);
    fs.writeFileSync(file, [lines[0], '', lines[1]].join('\n'));
    await expect(readRunExport(folder, anywhere)).rejects.toThrow(`${file}:2: is empty`);
  });

  it('refuses files of two different runs, and a folder without an export', async () => {
    const { folder, dir } = exportedSample();
    const summaryFile = path.join(folder, 'summary.json');
    fs.writeFileSync(summaryFile, JSON.stringify({ ...readJson(summaryFile), run_id: 'another-run' }));
    await expect(readRunExport(folder, anywhere)).rejects.toThrow(
      /summary.json: field "run_id" is another-run, but manifest.json is run .*two runs/,
    );
    const empty = path.join(dir, 'empty');
    fs.mkdirSync(empty);
    await expect(readRunExport(empty, anywhere)).rejects.toThrow(
      /manifest.json: not found. An exported run folder holds manifest.json, summary.json/,
    );
    await expect(readRunExport(path.join(folder, 'manifest.json'), anywhere)).rejects.toThrow(/is a file, not a folder/);
  });
});

describe('request columns', () => {
  it('carry every stored request column, each under a field of its own in requests.jsonl', async () => {
    const db = openDatabase(path.join(tempDir(), 'columns.db'));
    const stored = (db.prepare('PRAGMA table_info(requests)').all() as { name: string }[])
      .map((column) => column.name)
      .filter((name) => name !== 'run_id');
    db.close();
    expect(REQUEST_COLUMNS.map((entry) => entry.column).sort()).toEqual([...stored].sort());
    const fields = REQUEST_COLUMNS.map((entry) => entry.field);
    expect(new Set(fields).size).toBe(fields.length);
  });

  it('bring back every exported field as it was stored, text and blobs included', async () => {
    const offsets = (values: number[]) => Buffer.from(Float64Array.from(values).buffer);
    const row: Required<RequestRow> = {
      seq: 4,
      warmup: 1,
      group_name: 'chat',
      item_id: 'item-1',
      scheduled_ms: 10.5,
      t0_ms: 11.25,
      headers_ms: 12,
      end_ms: 90,
      ttft_ms: 20.125,
      e2e_ms: 78.75,
      tpot_ms: 3.5,
      queue_ms: 0.5,
      client_overhead_ms: 0.25,
      output_tokens: 17,
      output_tokens_source: 'usage',
      prompt_tokens: 40,
      cached_tokens: 32,
      finish_reason: 'stop',
      http_status: 200,
      error_class: 'partial_stream',
      error_message: 'stream ended early',
      timings_json: JSON.stringify({ prompt_n: 8, cache_n: 32, draft_n: 6 }),
      chunk_offsets: offsets([20.125, 23.5, 27.000001]),
      accepted: 0,
      acceptance_json: JSON.stringify({ checks: [{ kind: 'regex', passed: false }] }),
      prompt_text: 'What is 2 + 2?',
      output_text: '4',
      prompt_sha256: 'a'.repeat(64),
      output_sha256: 'b'.repeat(64),
      prompt_chars: 14,
      output_chars: 1,
      ttfr_ms: 18,
      ttfa_ms: 20.125,
      ttft_from_schedule_ms: 20.875,
      e2e_from_schedule_ms: 79.5,
      decode_tokens_per_s: 285.7,
      reasoning_chunk_offsets: offsets([18, 19.5]),
      reasoning_text: 'adding',
      reasoning_sha256: 'c'.repeat(64),
      reasoning_chars: 6,
      reasoning_tokens: 2,
      reasoning_tokens_note: 'counted by the server',
      conversation: 3,
      turn: 2,
      block_hashes: JSON.stringify(['h1', 'h2']),
      ttfc_ms: 21.5,
      tool_call_ms: 60.75,
      chunk_answer_chars: Buffer.from(Uint32Array.from([2, 0, 3]).buffer),
      tool_calls_json: JSON.stringify({
        calls: 1,
        valid: 1,
        argument_chars: 18,
        argument_tokens: 7,
        argument_tokens_note: null,
        text: [{ name: 'get_weather', arguments: '{"city": "Paris"}' }],
      }),
    };
    const line = JSON.parse(JSON.stringify(requestRecord(row))) as ExportedRequest;
    expect(exportDocumentProblem('request', line)).toBeNull();
    expect(Object.keys(line).sort()).toEqual(REQUEST_COLUMNS.map((entry) => entry.field).sort());
    expect(Object.fromEntries(REQUEST_COLUMNS.map(({ column, imported }) => [column, imported(line)]))).toEqual(row);
  });
});
