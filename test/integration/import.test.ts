import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { inferlab } from '../support/cli';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

/** Every stored column of a run's requests and telemetry, blobs as hex: what "round-trips" must mean. */
function storedRows(dbFile: string, runId: string) {
  const db = new Database(dbFile, { readonly: true });
  const hex = (row: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(row).map(([key, value]) => [key, Buffer.isBuffer(value) ? value.toString('hex') : value]));
  try {
    return {
      requests: (db.prepare('SELECT * FROM requests WHERE run_id = ? ORDER BY seq').all(runId) as Record<string, unknown>[]).map(hex),
      telemetry: (
        db.prepare('SELECT * FROM telemetry_series WHERE run_id = ? ORDER BY series').all(runId) as Record<string, unknown>[]
      ).map(hex),
      run: db.prepare('SELECT summary_json, engine_json, server_json, model_sha256, workload_revision FROM runs WHERE id = ?').get(runId),
    };
  } finally {
    db.close();
  }
}

async function measuredRun(db: string, concurrency: string): Promise<string> {
  const run = await inferlab([
    'run',
    '--workload',
    'chat-short',
    '--model',
    'demo:q8_0',
    '--concurrency',
    concurrency,
    '--requests',
    '6',
    '--warmup',
    '1',
    '--db',
    db,
    '--json',
  ]);
  expect(run.code, run.stderr).toBe(0);
  return (JSON.parse(run.stdout) as { run_id: string }).run_id;
}

describe('export and import between databases', () => {
  it('brings real runs back field for field, and they compare as the originals do', async () => {
    const dir = tempDir();
    const source = path.join(dir, 'source.db');
    const target = path.join(dir, 'target.db');
    const runIds = [await measuredRun(source, '2'), await measuredRun(source, '1')];

    for (const runId of runIds) {
      const folder = path.join(dir, `export-${runId}`);
      expect((await inferlab(['export', runId, '--out', folder, '--db', source])).code).toBe(0);
      expect(fs.readFileSync(path.join(folder, 'telemetry.csv'), 'utf8')).toMatch(/^t_ms,kind,gpu,/);
      const imported = await inferlab(['import', folder, '--db', target, '--json']);
      expect(imported.code, imported.stderr).toBe(0);
      expect(JSON.parse(imported.stdout)).toMatchObject({ run_id: runId, requests: 7, imported_from: folder });
      // Every column of every request and telemetry series, byte for byte, and the run's summary and facts.
      expect(storedRows(target, runId)).toEqual(storedRows(source, runId));

      // Exported again, the copy's files are the original's (the manifest adds where it was imported from).
      const again = path.join(dir, `again-${runId}`);
      expect((await inferlab(['export', runId, '--out', again, '--db', target])).code).toBe(0);
      for (const name of ['requests.jsonl', 'requests.csv', 'summary.json', 'telemetry.json', 'telemetry.csv', 'trace.jsonl'])
        expect(fs.readFileSync(path.join(again, name), 'utf8'), name).toBe(fs.readFileSync(path.join(folder, name), 'utf8'));
      const manifest = JSON.parse(fs.readFileSync(path.join(again, 'manifest.json'), 'utf8'));
      expect(manifest.configuration.imported).toMatchObject({ from: folder, schema_version: 1 });

      // A second import of the same run is refused, and nothing is doubled.
      const twice = await inferlab(['import', folder, '--db', target]);
      expect(twice.code).toBe(2);
      expect(twice.stderr).toContain(`Run ${runId} is already in this database; nothing was imported`);
      expect(storedRows(target, runId).requests).toHaveLength(7);
    }

    const listed = JSON.parse((await inferlab(['runs', 'list', '--db', target, '--json'])).stdout) as {
      run_id: string;
      imported_from: string;
    }[];
    expect(listed.map((run) => run.run_id).sort()).toEqual([...runIds].sort());
    for (const run of listed) expect(run.imported_from).toBe(path.join(dir, `export-${run.run_id}`));
    const human = await inferlab(['runs', 'list', '--db', target]);
    expect(human.stdout).toContain('completed [imported]');

    const compared = await Promise.all([source, target].map((db) => inferlab(['compare', ...runIds, '--db', db, '--json'])));
    for (const result of compared) expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(compared[1]!.stdout)).toEqual(JSON.parse(compared[0]!.stdout));
  });

  it('refuses a folder that is not a complete, current export, naming the file and what to do, and imports nothing', async () => {
    const dir = tempDir();
    const target = path.join(dir, 'target.db');
    const folder = path.join(dir, 'broken');
    fs.mkdirSync(folder);
    const missing = await inferlab(['import', folder, '--db', target]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`${path.join(folder, 'manifest.json')}: not found. An exported run folder holds manifest.json`);
    fs.writeFileSync(path.join(folder, 'manifest.json'), JSON.stringify({ schema_version: 99, run_id: 'x' }));
    const newer = await inferlab(['import', folder, '--db', target, '--json']);
    expect(newer.code).toBe(2);
    expect(JSON.parse(newer.stdout).error.message).toBe(
      `${path.join(folder, 'manifest.json')}: field "schema_version" is 99, newer than this Infer Lab reads (1). Update Infer Lab to a version that reads it, then import again.`,
    );
    const listed = await inferlab(['runs', 'list', '--db', target, '--json']);
    expect(JSON.parse(listed.stdout)).toEqual([]);
  });
});
