import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExperimentResult, VerdictRow } from '../../src/shared/contract/experiments';
import { openDatabase, type Db } from '../../src/main/store/database';
import { ExperimentStore } from '../../src/main/store/experiment-store';
import { exportParquet, PARQUET_EXPORT_SCHEMA_VERSION, PARQUET_TABLES } from '../../src/main/store/parquet-export';
import {
  CHUNK_COLUMNS,
  CONDITION_COLUMNS,
  DECISION_COLUMNS,
  EXPERIMENT_COLUMNS,
  REQUEST_PARQUET_COLUMNS,
  RUN_COLUMNS,
  TELEMETRY_COLUMNS,
  VERDICT_COLUMNS,
} from '../../src/main/store/parquet-tables';
import { RunStore } from '../../src/main/store/run-store';
import { decodeChunkOffsets } from '../../src/main/store/run-rows';
import { storeSampleRun } from '../support/stored-run';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

// Read back with DuckDB, as a researcher would: the files must stand on their own.
let duck: DuckDBConnection;
beforeAll(async () => {
  duck = await (await DuckDBInstance.create(':memory:')).connect();
});
afterAll(() => duck.closeSync());

const query = async (sql: string) => (await duck.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[];
const table = (folder: string, name: string) => `'${path.join(folder, `${name}.parquet`)}'`;

const verdict = (metric: string, overrides: Partial<VerdictRow> = {}): VerdictRow => ({
  metric,
  a: 'Q8_0',
  b: 'Q4_K_M',
  a_value: 40.5,
  b_value: 31.25,
  difference: -9.25,
  ci: [-11.5, -7],
  verdict: 'faster',
  relative_difference: -0.228,
  relative_ci: [-0.284, -0.173],
  confidence: 0.975,
  equivalence_margin: 0.05,
  windows: [3, 3],
  requests: [48, 47],
  note: null,
  ...overrides,
});

/** A store holding what a real one does: runs (one private), an experiment over two of them with verdicts, and a decision. */
function sampleStore() {
  const dir = tempDir();
  const db = openDatabase(path.join(dir, 'store.db'));
  const runs = new RunStore(db);
  const [a, b, privateRun] = [storeSampleRun(runs), storeSampleRun(runs), storeSampleRun(runs, { private: true })];
  const experiments = new ExperimentStore(db);
  const experimentId = experiments.create('quant', { quants: ['Q8_0', 'Q4_K_M'] });
  experiments.addRun(experimentId, a!, 'Q8_0', 0);
  experiments.addRun(experimentId, b!, 'Q4_K_M', 0);
  const result = {
    experiment_id: experimentId,
    kind: 'quant',
    status: 'completed',
    protocol: {},
    conditions: [],
    verdicts: [
      verdict('tpot_ms:p50'),
      verdict('ttft_ms:p95', { ci: null, relative_ci: null, verdict: 'insufficient data', note: 'n too small for p95' }),
    ],
    recommendation: { choice: 'Q4_K_M', reason: 'fastest within the quality gate', excluded: [] },
  } as unknown as ExperimentResult;
  experiments.finish(experimentId, 'completed', result);
  experiments.recordDecision(experimentId, 'tester', {
    experiment_id: experimentId,
    chosen: 'Q4_K_M',
    chosen_run_ids: [b],
    reason: 'fits the 8 GB card',
    decided_by: 'tester',
    decided_at: '2026-12-01T10:15:30.250Z',
  });
  return { dir, db, runs, runIds: [a!, b!, privateRun!], experimentId };
}

const count = (db: Db, sql: string) => (db.prepare(sql).get() as { n: number }).n;

describe('the store as Parquet tables (inferlab export --format parquet)', () => {
  it('writes every table with the rows SQLite holds, typed as a data tool expects, and the schema version', async () => {
    const { dir, db, runs, runIds } = sampleStore();
    const folder = path.join(dir, 'parquet');
    const written = await exportParquet(db, runs, { all: true }, folder);

    // Row counts against SQLite, each table counted its own way.
    const requestRows = db.prepare('SELECT chunk_offsets FROM requests').all() as { chunk_offsets: Buffer | null }[];
    const telemetryPoints = (db.prepare('SELECT points FROM telemetry_series').all() as { points: Buffer }[]).reduce(
      (sum, row) => sum + row.points.byteLength / 16,
      0,
    );
    const expected = {
      runs: count(db, 'SELECT COUNT(*) AS n FROM runs'),
      requests: requestRows.length,
      chunks: requestRows.reduce((sum, row) => sum + decodeChunkOffsets(row.chunk_offsets).length, 0),
      telemetry: telemetryPoints,
      experiments: 1,
      conditions: count(db, 'SELECT COUNT(*) AS n FROM experiment_runs'),
      verdicts: 2,
      decisions: 1,
    };
    expect(Object.fromEntries(written.tables.map((entry) => [entry.name, entry.rows]))).toEqual(expected);
    for (const name of PARQUET_TABLES) {
      const [read] = await query(`SELECT COUNT(*)::INTEGER AS n FROM ${table(folder, name)}`);
      expect(read!.n, name).toBe(expected[name]);
    }
    expect(fs.readdirSync(folder).filter((file) => file.endsWith('.partial'))).toEqual([]);

    // Types: ids as text, instants as timestamps, durations as doubles, counts as integers.
    const types = async (name: string) =>
      Object.fromEntries((await query(`DESCRIBE SELECT * FROM ${table(folder, name)}`)).map((row) => [row.column_name, row.column_type]));
    expect(await types('runs')).toMatchObject({
      run_id: 'VARCHAR',
      started_at: 'TIMESTAMP WITH TIME ZONE',
      private: 'BOOLEAN',
      model_size_bytes: 'BIGINT',
      ttft_p50_ms: 'DOUBLE',
      summary_json: 'VARCHAR',
    });
    expect(await types('requests')).toMatchObject({
      run_id: 'VARCHAR',
      seq: 'BIGINT',
      warmup: 'BOOLEAN',
      t0_ms: 'DOUBLE',
      ttft_ms: 'DOUBLE',
      output_tokens: 'BIGINT',
      http_status: 'INTEGER',
      server_timings_json: 'VARCHAR',
    });
    expect(await types('decisions')).toMatchObject({ decided_at: 'TIMESTAMP WITH TIME ZONE', chosen_run_ids_json: 'VARCHAR' });

    // The schema version travels in every file's own metadata, and in manifest.json.
    const versions = await query(
      `SELECT decode(value) AS version FROM parquet_kv_metadata('${folder}/*.parquet') WHERE decode(key) = 'inferlab.schema_version'`,
    );
    expect(versions.map((row) => row.version)).toEqual(PARQUET_TABLES.map(() => String(PARQUET_EXPORT_SCHEMA_VERSION)));
    expect(JSON.parse(fs.readFileSync(path.join(folder, 'manifest.json'), 'utf8'))).toMatchObject({
      schema_version: PARQUET_EXPORT_SCHEMA_VERSION,
      scope: 'all',
    });

    // Values: a request's timings, a run's start, as SQLite holds them.
    const [firstRun] = runIds;
    const stored = db.prepare('SELECT seq, ttft_ms, e2e_ms, error_class FROM requests WHERE run_id = ? ORDER BY seq').all(firstRun);
    expect(
      await query(
        `SELECT seq::INTEGER AS seq, ttft_ms, e2e_ms, error_class FROM ${table(folder, 'requests')} WHERE run_id = '${firstRun}' ORDER BY seq`,
      ),
    ).toEqual(stored);
    const startedAt = (db.prepare('SELECT started_at FROM runs WHERE id = ?').get(firstRun) as { started_at: string }).started_at;
    const [run] = await query(`SELECT epoch_ms(started_at)::BIGINT AS ms FROM ${table(folder, 'runs')} WHERE run_id = '${firstRun}'`);
    expect(Number(run!.ms)).toBe(Date.parse(startedAt));
  });

  it('gives each streamed chunk its gap to the one before (the inter-token latency) and marks reasoning', async () => {
    const { dir, db, runs, runIds } = sampleStore();
    const folder = path.join(dir, 'parquet');
    await exportParquet(db, runs, { runId: runIds[0]! }, folder);
    const chunks = await query(
      `SELECT seq::INTEGER AS seq, chunk, offset_ms, gap_ms, reasoning FROM ${table(folder, 'chunks')} WHERE seq = 1 ORDER BY chunk`,
    );
    expect(chunks).toEqual([
      { seq: 1, chunk: 0, offset_ms: 1.5, gap_ms: null, reasoning: true },
      { seq: 1, chunk: 1, offset_ms: 2.5, gap_ms: 1, reasoning: true },
      { seq: 1, chunk: 2, offset_ms: 4.1, gap_ms: expect.closeTo(1.6, 9), reasoning: false },
      { seq: 1, chunk: 3, offset_ms: 8.2, gap_ms: expect.closeTo(4.1, 9), reasoning: false },
      { seq: 1, chunk: 4, offset_ms: 12.3, gap_ms: expect.closeTo(4.1, 9), reasoning: false },
    ]);
    // A failed request streamed nothing: no chunk rows, but its request row is there.
    expect(await query(`SELECT COUNT(*)::INTEGER AS n FROM ${table(folder, 'chunks')} WHERE seq = 2`)).toEqual([{ n: 0 }]);
    // A sample that could not be read (NaN) reads as a missing value, never as a number.
    const utilization = await query(
      `SELECT t_ms, value FROM ${table(folder, 'telemetry')} WHERE series = 'gpu0.utilization' ORDER BY t_ms`,
    );
    expect(utilization).toEqual([
      { t_ms: 0, value: 10 },
      { t_ms: 250, value: null },
    ]);
  });

  it('keeps a private run private: hashes and lengths, no text', async () => {
    const { dir, db, runs, runIds } = sampleStore();
    const folder = path.join(dir, 'parquet');
    await exportParquet(db, runs, { all: true }, folder);
    const texts = await query(
      `SELECT run_id, count(prompt)::INTEGER AS prompts, count(output)::INTEGER AS outputs, count(prompt_sha256)::INTEGER AS hashes FROM ${table(folder, 'requests')} GROUP BY run_id`,
    );
    const byRun = Object.fromEntries(texts.map((row) => [row.run_id, row]));
    expect(byRun[runIds[0]!]).toMatchObject({ prompts: 3, outputs: 2 });
    expect(byRun[runIds[2]!]).toMatchObject({ prompts: 0, outputs: 0, hashes: 3 });
    expect(await query(`SELECT private FROM ${table(folder, 'runs')} WHERE run_id = '${runIds[2]}'`)).toEqual([{ private: true }]);
  });

  it('narrows to one experiment: its runs, conditions, verdicts with their intervals, and its decision', async () => {
    const { dir, db, runs, runIds, experimentId } = sampleStore();
    const folder = path.join(dir, 'parquet');
    const written = await exportParquet(db, runs, { experimentId: experimentId.slice(0, 8) }, folder);
    expect(Object.fromEntries(written.tables.map((entry) => [entry.name, entry.rows]))).toMatchObject({
      runs: 2,
      experiments: 1,
      conditions: 2,
      verdicts: 2,
      decisions: 1,
    });
    expect((await query(`SELECT run_id FROM ${table(folder, 'runs')} ORDER BY run_id`)).map((row) => row.run_id)).toEqual(
      [runIds[0], runIds[1]].sort(),
    );
    expect(
      await query(
        `SELECT metric, ci_low, ci_high, verdict, windows_a, requests_b::INTEGER AS requests_b, note FROM ${table(folder, 'verdicts')} ORDER BY metric`,
      ),
    ).toEqual([
      { metric: 'tpot_ms:p50', ci_low: -11.5, ci_high: -7, verdict: 'faster', windows_a: 3, requests_b: 47, note: null },
      {
        metric: 'ttft_ms:p95',
        ci_low: null,
        ci_high: null,
        verdict: 'insufficient data',
        windows_a: 3,
        requests_b: 47,
        note: 'n too small for p95',
      },
    ]);
    expect(await query(`SELECT recommendation FROM ${table(folder, 'experiments')}`)).toEqual([{ recommendation: 'Q4_K_M' }]);
    expect(await query(`SELECT chosen, decided_by, epoch_ms(decided_at)::BIGINT AS at FROM ${table(folder, 'decisions')}`)).toEqual([
      { chosen: 'Q4_K_M', decided_by: 'tester', at: String(Date.parse('2026-12-01T10:15:30.250Z')) },
    ]);
    // One run alone has no experiment tables' rows, but every file, so a script reads any export the same way.
    const one = path.join(dir, 'one');
    const single = await exportParquet(db, runs, { runId: runIds[2]! }, one);
    expect(single.tables.map((entry) => [entry.name, entry.rows]).filter(([, rows]) => rows !== 0)).toEqual([
      ['runs', 1],
      ['requests', 3],
      ['chunks', 8],
      ['telemetry', 6],
    ]);
    expect(await query(`SELECT COUNT(*)::INTEGER AS n FROM ${table(one, 'verdicts')}`)).toEqual([{ n: 0 }]);
  });

  it('keeps the runs table its columns, named and ordered as schema version 1 has them, though the headline figures come from the metric table', () => {
    expect(PARQUET_EXPORT_SCHEMA_VERSION).toBe(1);
    expect(RUN_COLUMNS.map((column) => `${column.name}:${column.type}`)).toEqual([
      'run_id:string',
      'kind:string',
      'status:string',
      'status_reason:string',
      'started_at:timestamp',
      'ended_at:timestamp',
      'private:boolean',
      'model_ref:string',
      'model_path:string',
      'model_size_bytes:int64',
      'model_sha256:string',
      'workload_name:string',
      'workload_revision:string',
      'requests_attempted:int64',
      'requests_completed:int64',
      'requests_failed:int64',
      'ttft_p50_ms:double',
      'ttft_p95_ms:double',
      'ttft_p99_ms:double',
      'tpot_p50_ms:double',
      'tpot_p95_ms:double',
      'itl_p50_ms:double',
      'itl_p99_ms:double',
      'e2e_p50_ms:double',
      'e2e_p95_ms:double',
      'image_encode_p50_ms:double',
      'image_encode_p95_ms:double',
      'image_decode_p50_ms:double',
      'requests_per_s:double',
      'output_tokens_per_s:double',
      'goodput_requests_per_s:double',
      'embedding_inputs_per_s:double',
      'rerank_documents_per_s:double',
      'engine_json:string',
      'server_json:string',
      'configuration_json:string',
      'environment_json:string',
      'summary_json:string',
    ]);
  });

  it('is documented column for column in docs/METRICS.md', () => {
    const section = fs.readFileSync(path.join(import.meta.dirname, '../../docs/METRICS.md'), 'utf8').split('## Parquet export')[1]!;
    const tables = {
      runs: RUN_COLUMNS,
      requests: REQUEST_PARQUET_COLUMNS,
      chunks: CHUNK_COLUMNS,
      telemetry: TELEMETRY_COLUMNS,
      experiments: EXPERIMENT_COLUMNS,
      conditions: CONDITION_COLUMNS,
      verdicts: VERDICT_COLUMNS,
      decisions: DECISION_COLUMNS,
    };
    expect(Object.keys(tables)).toEqual([...PARQUET_TABLES]);
    for (const [name, columns] of Object.entries(tables)) {
      const row = section.split('\n').find((line) => line.startsWith(`| \`${name}\` |`));
      expect(row, name).toBeDefined();
      const documented = [...row!.split('|')[3]!.matchAll(/`([a-z0-9_]+)`/g)].map((match) => match[1]);
      expect(
        columns.map((column) => column.name).filter((column) => !documented.includes(column)),
        name,
      ).toEqual([]);
    }
  });

  it('exports what older or imported records hold, with missing values where a part is absent or of another type', async () => {
    const { dir, db, runs, runIds, experimentId } = sampleStore();
    // A summary from before most of today's fields, a result whose verdicts are malformed, a result that is not JSON.
    db.prepare('UPDATE runs SET summary_json = ? WHERE id = ?').run(
      JSON.stringify({ run_id: runIds[0], metrics: { ttft_ms: { p50: 'fast' } } }),
      runIds[0],
    );
    db.prepare('UPDATE runs SET summary_json = ? WHERE id = ?').run('{not json', runIds[1]);
    db.prepare('UPDATE experiments SET result_json = ? WHERE id = ?').run(
      JSON.stringify({ verdicts: [{ metric: 'tpot_ms:p50', a_value: '12', ci: 'wide', windows: 3, verdict: 7 }, null, 'x'] }),
      experimentId,
    );
    const other = new ExperimentStore(db).create('sweep', {});
    db.prepare('UPDATE experiments SET result_json = ? WHERE id = ?').run('[broken', other);
    const folder = path.join(dir, 'parquet');
    const written = await exportParquet(db, runs, { all: true }, folder);
    expect(Object.fromEntries(written.tables.map((entry) => [entry.name, entry.rows]))).toMatchObject({
      runs: 3,
      experiments: 2,
      verdicts: 1,
    });
    expect(
      await query(
        `SELECT ttft_p50_ms, requests_attempted, summary_json FROM ${table(folder, 'runs')} WHERE run_id IN ('${runIds[0]}', '${runIds[1]}') ORDER BY summary_json`,
      ),
    ).toEqual([
      { ttft_p50_ms: null, requests_attempted: null, summary_json: expect.stringContaining('"fast"') },
      { ttft_p50_ms: null, requests_attempted: null, summary_json: '{not json' },
    ]);
    expect(await query(`SELECT metric, a_value, ci_low, windows_a, verdict FROM ${table(folder, 'verdicts')}`)).toEqual([
      { metric: 'tpot_ms:p50', a_value: null, ci_low: null, windows_a: null, verdict: '7' },
    ]);
  });

  it('names what it cannot find, and leaves no half-written file when writing fails', async () => {
    const { dir, db, runs } = sampleStore();
    await expect(exportParquet(db, runs, { runId: 'nope' }, path.join(dir, 'x'))).rejects.toThrow('No run nope');
    await expect(exportParquet(db, runs, { experimentId: 'nope' }, path.join(dir, 'x'))).rejects.toThrow('No experiment nope');
    // An export that fails after every table is written (its manifest cannot be): none of them
    // appears, and the files of an earlier export in that folder are left as they were.
    const folder = path.join(dir, 'blocked');
    await exportParquet(db, runs, { runId: (db.prepare('SELECT id FROM runs LIMIT 1').get() as { id: string }).id }, folder);
    const before = Object.fromEntries(fs.readdirSync(folder).map((file) => [file, fs.readFileSync(path.join(folder, file))]));
    fs.mkdirSync(path.join(folder, 'manifest.json.partial'));
    await expect(exportParquet(db, runs, { all: true }, folder)).rejects.toThrow(/manifest\.json\.partial/);
    fs.rmdirSync(path.join(folder, 'manifest.json.partial'));
    expect(Object.fromEntries(fs.readdirSync(folder).map((file) => [file, fs.readFileSync(path.join(folder, file))]))).toEqual(before);
  });
});
