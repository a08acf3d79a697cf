import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { CommandHandler } from '../../src/main/cli/args';
import { exportCommand, importCommand, runsCommand } from '../../src/main/cli/commands/runs';
import { createServices } from '../../src/main/services';
import { shellAccess } from '../../src/main/services/access';
import { openDatabase } from '../../src/main/store/database';
import { RunStore } from '../../src/main/store/run-store';
import { storeSampleRun, writeRunExport } from '../support/stored-run';
import { useTempDirs } from '../support/temp';

// Attack tests (docs/SECURITY.md, "Stored runs"): stored runs that a list, an export or a short id
// could be turned against. Fixtures are written through the store (no llama-server); the CLI's
// own command handlers run in process.

const tempDir = useTempDirs();

let dataDir: string;
let savedDataDir: string | undefined;
beforeEach(() => {
  // The commands open the services as the CLI does; their data folder is the test's own.
  savedDataDir = process.env.INFERLAB_DATA_DIR;
  dataDir = tempDir();
  process.env.INFERLAB_DATA_DIR = dataDir;
});
afterEach(() => {
  if (savedDataDir === undefined) delete process.env.INFERLAB_DATA_DIR;
  else process.env.INFERLAB_DATA_DIR = savedDataDir;
});

/** Runs one CLI command handler in process, with what it printed. */
async function cli(handler: CommandHandler, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((stdout += String(chunk)), true));
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((stderr += String(chunk)), true));
  try {
    const code = await handler(args, new AbortController().signal);
    return { code, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

/** JSON text nested `depth` objects deep. */
const nestedJson = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

/** A database file holding `count` sample runs, closed so that the commands open it as the CLI does. */
function databaseWithRuns(count: number): { db: string; ids: string[] } {
  const db = path.join(tempDir(), 'runs.db');
  const handle = openDatabase(db);
  const runs = new RunStore(handle);
  const ids = Array.from({ length: count }, () => storeSampleRun(runs));
  handle.close();
  return { db, ids };
}

/** Writes straight into a database, as an older version or a hand with sqlite3 could. */
function plant(db: string, sql: string, ...values: unknown[]): void {
  const handle = openDatabase(db);
  try {
    handle.prepare(sql).run(...values);
  } finally {
    handle.close();
  }
}

/** A sample run's export folder, from a database of its own. */
function sampleExport(): { folder: string; runId: string } {
  const dir = tempDir();
  const handle = openDatabase(path.join(dir, 'source.db'));
  const runs = new RunStore(handle);
  const runId = storeSampleRun(runs);
  const folder = writeRunExport(runs, runId, path.join(dir, 'export'));
  handle.close();
  return { folder, runId };
}

/** Rewrites an export's JSON files with `change` applied to each parsed document. */
function editExport(folder: string, file: 'manifest.json' | 'summary.json', change: (document: Record<string, unknown>) => void): void {
  const document = JSON.parse(fs.readFileSync(path.join(folder, file), 'utf8')) as Record<string, unknown>;
  change(document);
  fs.writeFileSync(path.join(folder, file), JSON.stringify(document));
}

/** Gives an export another run id, in both files that carry it. */
function renameExportedRun(folder: string, runId: string): void {
  editExport(folder, 'manifest.json', (manifest) => (manifest.run_id = runId));
  editExport(folder, 'summary.json', (summary) => (summary.run_id = runId));
}

const modeOf = (file: string) => fs.statSync(file).mode & 0o777;

describe('item 4: one unreadable run does not break every run list', () => {
  it('refuses an import nested 1000 levels deep, naming the file and the field, and stores nothing', async () => {
    const { db } = databaseWithRuns(0);
    const { folder } = sampleExport();
    editExport(folder, 'manifest.json', (manifest) => (manifest.engine = JSON.parse(nestedJson(1000))));
    await expect(cli(importCommand, [folder, '--db', db])).rejects.toThrow(
      `${path.join(folder, 'manifest.json')}: field "engine" nests objects and arrays deeper than 64 levels`,
    );

    const deepLine = sampleExport();
    const requestsFile = path.join(deepLine.folder, 'requests.jsonl');
    const lines = fs.readFileSync(requestsFile, 'utf8').trim().split('\n');
    const line = JSON.parse(lines[1]!) as Record<string, unknown>;
    lines[1] = JSON.stringify({ ...line, server_timings: { nested: JSON.parse(nestedJson(1000)) } });
    fs.writeFileSync(requestsFile, `${lines.join('\n')}\n`);
    await expect(cli(importCommand, [deepLine.folder, '--db', db])).rejects.toThrow(
      `${requestsFile}:2: field "server_timings" nests objects and arrays deeper than 64 levels`,
    );

    const large = sampleExport();
    editExport(large.folder, 'manifest.json', (manifest) => (manifest.configuration = { padding: 'x'.repeat(2 * 1024 * 1024) }));
    await expect(cli(importCommand, [large.folder, '--db', db])).rejects.toThrow(
      `${path.join(large.folder, 'manifest.json')}: field "configuration" takes 2097166 bytes as JSON, more than the 1048576`,
    );
    expect(JSON.parse((await cli(runsCommand, ['list', '--db', db, '--json'])).stdout)).toEqual([]);
  });

  it('lists the other runs when one stored record nests deeper than SQLite reads, and names the one it skipped', async () => {
    const { db, ids } = databaseWithRuns(3);
    const [bad, ...good] = ids as [string, ...string[]];
    // As an older version imported it: SQLite's JSON functions refuse text nested past 1000 levels.
    plant(db, 'UPDATE runs SET engine_json = ? WHERE id = ?', nestedJson(1001), bad);

    const table = await cli(runsCommand, ['list', '--db', db]);
    expect(table.code).toBe(0);
    for (const id of good) expect(table.stdout).toContain(id.slice(0, 8));
    expect(table.stdout).not.toContain(bad.slice(0, 8));
    expect(table.stderr).toContain(
      `skipped run ${bad}: its stored engine is not JSON that SQLite can read (malformed, or nested too deep); delete it with "inferlab runs delete ${bad}"`,
    );
    const listed = await cli(runsCommand, ['list', '--db', db, '--json']);
    expect((JSON.parse(listed.stdout) as { run_id: string }[]).map((run) => run.run_id).sort()).toEqual([...good].sort());
    expect(listed.stderr).toContain(`skipped run ${bad}`);

    const container = await createServices({ dbPath: db, access: shellAccess(), idleTelemetry: false });
    try {
      const { runs } = container.services;
      const page = await runs.page({ offset: 0, limit: 50 });
      expect(page.items.map((item) => item.runId).sort()).toEqual([...good].sort());
      expect(page.skipped).toEqual([{ runId: bad, reason: expect.stringContaining('its stored engine is not JSON that SQLite can read') }]);
      expect(page.total).toBe(3);
      // The search reads the same columns.
      const found = await runs.page({ offset: 0, limit: 50, search: 'q8_0 cpu' });
      expect(found.items).toHaveLength(2);
      expect((await runs.list()).map((item) => item.runId).sort()).toEqual([...good].sort());
      await expect(runs.get(bad)).rejects.toThrow(`Run ${bad} cannot be read`);
      expect((await runs.get(good[0]!)).item.runId).toBe(good[0]);
    } finally {
      await container.dispose();
    }

    // A record that is not JSON at all is skipped the same way; deleting both leaves a clean list.
    plant(db, 'UPDATE runs SET summary_json = ? WHERE id = ?', '{"metrics": ', good[0]);
    const again = await cli(runsCommand, ['list', '--db', db]);
    expect(again.stderr).toContain(`skipped run ${good[0]}: its stored summary is not JSON`);
    expect((await cli(runsCommand, ['delete', bad, '--db', db])).code).toBe(0);
    expect((await cli(runsCommand, ['delete', good[0]!, '--db', db])).code).toBe(0);
    const clean = await cli(runsCommand, ['list', '--db', db]);
    expect(clean.stderr).not.toContain('skipped');
    expect(clean.stdout).toContain(good[1]!.slice(0, 8));
  });
});

describe('item 7: a run export writes only its own files, owner-only', () => {
  it('does not write through a requests.jsonl link planted in the folder, and writes nothing there', async () => {
    const { db, ids } = databaseWithRuns(1);
    const out = tempDir();
    const victim = path.join(tempDir(), 'victim.txt');
    fs.writeFileSync(victim, 'PRIVATE-MARKER');
    fs.symlinkSync(victim, path.join(out, 'requests.jsonl'));
    await expect(cli(exportCommand, [ids[0]!, '--out', out, '--db', db])).rejects.toThrow(
      `${path.join(out, 'requests.jsonl')} is a symbolic link; an export writes its own files and follows no link`,
    );
    expect(fs.readFileSync(victim, 'utf8')).toBe('PRIVATE-MARKER');
    expect(fs.readdirSync(out)).toEqual(['requests.jsonl']);
  });

  it('makes a new folder 0700 and every file 0600, and writes the same folder again', async () => {
    const { db, ids } = databaseWithRuns(1);
    const out = path.join(tempDir(), 'new', 'export');
    const written = await cli(exportCommand, [ids[0]!, '--out', out, '--db', db]);
    expect(written.code).toBe(0);
    expect(modeOf(out)).toBe(0o700);
    const files = fs.readdirSync(out).sort();
    expect(files).toEqual([
      'manifest.json',
      'requests.csv',
      'requests.jsonl',
      'summary.json',
      'telemetry.csv',
      'telemetry.json',
      'trace.jsonl',
    ]);
    for (const file of files) expect(modeOf(path.join(out, file)), file).toBe(0o600);
    expect(written.stdout.trim().split('\n').sort()).toEqual(files.map((file) => path.join(out, file)));
    // The same run again into the same folder replaces its files, leaving no temporary file behind.
    expect((await cli(exportCommand, [ids[0]!, '--out', out, '--db', db])).code).toBe(0);
    expect(fs.readdirSync(out).sort()).toEqual(files);
  });

  it('refuses Parquet into a run-export folder (and the reverse) rather than replace its manifest.json', async () => {
    const { db, ids } = databaseWithRuns(1);
    const out = tempDir();
    expect((await cli(exportCommand, [ids[0]!, '--out', out, '--db', db])).code).toBe(0);
    const manifest = fs.readFileSync(path.join(out, 'manifest.json'), 'utf8');
    const before = fs.readdirSync(out).sort();
    await expect(cli(exportCommand, [ids[0]!, '--format', 'parquet', '--out', out, '--db', db])).rejects.toThrow(
      `${path.join(out, 'manifest.json')}: ${out} already holds the manifest.json of an export of run files, which this export of Parquet tables would replace; nothing was written. Choose another folder`,
    );
    expect(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8')).toBe(manifest);
    expect(fs.readdirSync(out).sort()).toEqual(before);

    const tables = path.join(tempDir(), 'tables');
    expect((await cli(exportCommand, [ids[0]!, '--format', 'parquet', '--out', tables, '--db', db])).code).toBe(0);
    expect(modeOf(tables)).toBe(0o700);
    for (const file of fs.readdirSync(tables)) expect(modeOf(path.join(tables, file)), file).toBe(0o600);
    await expect(cli(exportCommand, [ids[0]!, '--out', tables, '--db', db])).rejects.toThrow(
      `${tables} already holds the manifest.json of an export of Parquet tables, which this export of run files would replace`,
    );
    // A Parquet export into its own earlier folder still replaces it.
    expect((await cli(exportCommand, [ids[0]!, '--format', 'parquet', '--out', tables, '--db', db])).code).toBe(0);
  });
});

describe('item 8: no run id stands in for another', () => {
  it("refuses to import a run under another run's short id", async () => {
    const { db, ids } = databaseWithRuns(1);
    const victim = ids[0]!;
    const short = victim.slice(0, 8);
    const { folder } = sampleExport();
    renameExportedRun(folder, short);
    await expect(cli(importCommand, [folder, '--db', db])).rejects.toThrow(
      `${path.join(folder, 'manifest.json')}: field "run_id" is "${short}", not a run id as Infer Lab writes them`,
    );
    // The short id still names the run it was cut from.
    const shown = JSON.parse((await cli(runsCommand, ['show', short, '--db', db, '--json'])).stdout) as { manifest: { run_id: string } };
    expect(shown.manifest.run_id).toBe(victim);
  });

  it('refuses an import whose id another stored id is the start of (one an older version let in)', async () => {
    const { db } = databaseWithRuns(0);
    const { folder } = sampleExport();
    const incoming = 'abcd1234-1111-4111-8111-111111111111';
    renameExportedRun(folder, incoming);
    plant(db, "INSERT INTO runs (id, kind, status, started_at) VALUES ('abcd1234', 'workload', 'completed', '2026-01-01T00:00:00Z')");
    await expect(cli(importCommand, [folder, '--db', db])).rejects.toThrow(
      `Run ${incoming} shares the start of its id with run abcd1234 already in this database; nothing was imported`,
    );
  });

  it('refuses a prefix several runs share, naming each, where an exact short id used to win', async () => {
    const { db, ids } = databaseWithRuns(1);
    const real = ids[0]!;
    const short = real.slice(0, 8);
    const twin = `${short}-2222-4222-8222-222222222222`;
    // A run stored under another's short id by an older version, and a second run sharing the prefix.
    plant(db, "INSERT INTO runs (id, kind, status, started_at) VALUES (?, 'workload', 'completed', '2026-01-01T00:00:00Z')", short);
    plant(db, "INSERT INTO runs (id, kind, status, started_at) VALUES (?, 'workload', 'completed', '2026-01-02T00:00:00Z')", twin);
    for (const action of ['show', 'delete']) {
      const refused = await cli(runsCommand, [action, short, '--db', db]).then(
        () => '',
        (error: Error) => error.message,
      );
      expect(refused).toMatch(new RegExp(`^"${short}" could be any of these runs: .*\\. Give the full id of the one you mean\\.$`));
      for (const named of [`${short} (2026-01-01T00:00:00Z)`, `${twin} (2026-01-02T00:00:00Z)`, `${real} (`])
        expect(refused).toContain(named);
    }
    await expect(cli(exportCommand, [short, '--out', tempDir(), '--db', db])).rejects.toThrow('could be any of these runs');
    // Nothing was deleted; the full id names its run.
    expect(JSON.parse((await cli(runsCommand, ['list', '--db', db, '--json'])).stdout)).toHaveLength(3);
    const shown = JSON.parse((await cli(runsCommand, ['show', real, '--db', db, '--json'])).stdout) as { manifest: { run_id: string } };
    expect(shown.manifest.run_id).toBe(real);
    // A prefix is text, not a LIKE pattern: "_" is not any character.
    await expect(cli(runsCommand, ['show', `${real.slice(0, 3)}_${real.slice(4, 8)}`, '--db', db])).rejects.toThrow('No run');
  });
});
