import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';

import { checkDatabase } from '../../src/main/doctor';
import { secureAppDirs } from '../../src/main/core/paths';
import { RotatingLogFile } from '../../src/main/server/server-log-file';
import { openDatabase } from '../../src/main/store/database';
import { MIGRATIONS } from '../../src/main/store/migrations';
import { projectRoot } from '../../src/main/core/paths';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();
const mode = (file: string) => fs.statSync(file).mode & 0o777;

interface OpenedInChild {
  code: number | null;
  output: string;
  /** When `openDatabase` was entered and left, in ms since the epoch at sub-millisecond resolution. */
  interval: { start: number; end: number } | null;
}

/** Opens `file` in a fresh Node process as soon as every party to `barrier` has loaded the sources. */
function openInChild(script: string, file: string, barrier: string, party: string): Promise<OpenedInChild> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, file, barrier, party], {
      cwd: projectRoot(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('close', (code) => {
      const line = /^interval (\S+) (\S+)$/m.exec(output);
      resolve({ code, output, interval: line ? { start: Number(line[1]), end: Number(line[2]) } : null });
    });
  });
}

describe('durability', () => {
  it('lets two processes open the same fresh database at once: both migrate or wait, neither fails', async () => {
    const dir = tempDir();
    const script = path.join(dir, 'open.ts');
    const parties = ['first', 'second'];
    fs.writeFileSync(
      script,
      [
        "import fs from 'node:fs';",
        `import { openDatabase, schemaVersion } from ${JSON.stringify(path.join(projectRoot(), 'src/main/store/database.ts'))};`,
        'const [file, barrier, party] = process.argv.slice(2);',
        // A barrier on files, not on the clock: however slowly each process starts, neither opens the database before both can.
        "fs.writeFileSync(`${barrier}.${party}`, '');",
        'const deadline = Date.now() + 30_000;',
        `while (!${JSON.stringify(parties)}.every((name) => fs.existsSync(\`\${barrier}.\${name}\`))) {`,
        "  if (Date.now() > deadline) throw new Error('the other process never arrived');",
        '}',
        'const start = performance.timeOrigin + performance.now();',
        'const db = openDatabase(file);',
        'const end = performance.timeOrigin + performance.now();',
        'console.log(`version ${schemaVersion(db)}`);',
        'console.log(`interval ${start} ${end}`);',
        'db.close();',
      ].join('\n'),
    );
    const newest = MIGRATIONS[MIGRATIONS.length - 1]!.version;
    // Overlap is the point: a round in which one process finished before the other began tested
    // nothing, so it does not count, and three rounds that did overlap are required.
    let overlapping = 0;
    const gaps: string[] = [];
    for (let round = 0; round < 8 && overlapping < 3; round++) {
      const file = path.join(dir, `race-${round}.db`);
      const barrier = path.join(dir, `barrier-${round}`);
      const results = await Promise.all(parties.map((party) => openInChild(script, file, barrier, party)));
      for (const result of results) {
        expect(result.output).toContain(`version ${newest}`);
        expect(result.code).toBe(0);
      }
      const [a, b] = results.map((result) => result.interval!);
      if (a!.start < b!.end && b!.start < a!.end) overlapping += 1;
      else {
        const from = (time: number) => (time - a!.start).toFixed(1);
        gaps.push(`first [0, ${from(a!.end)}] ms, second [${from(b!.start)}, ${from(b!.end)}] ms`);
      }
    }
    expect(overlapping, `rounds whose opens did not overlap: ${gaps.join('; ')}`).toBe(3);
  }, 90_000);

  it('doctor runs PRAGMA quick_check and reports a damaged database', () => {
    const dir = tempDir();
    const file = path.join(dir, 'check.db');
    openDatabase(file).close();
    const healthy = checkDatabase(file);
    expect(healthy.status).toBe('ok');
    expect(healthy.detail).toMatch(/quick_check: ok/);

    const damaged = path.join(dir, 'damaged.db');
    const db = new Database(damaged);
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); CREATE INDEX t_v ON t (v);');
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    db.transaction(() => {
      for (let i = 0; i < 2000; i++) insert.run(`value ${i} ${'x'.repeat(50)}`);
    })();
    db.close();
    const bytes = fs.readFileSync(damaged);
    const pageSize = bytes.readUInt16BE(16);
    // Scribble over the middle of the file, past the schema page.
    for (let offset = pageSize * 3; offset < bytes.length - pageSize; offset += pageSize * 2)
      bytes.fill(0x5a, offset + 8, offset + pageSize);
    fs.writeFileSync(damaged, bytes);
    const report = checkDatabase(damaged);
    expect(report.status).not.toBe('ok');
    expect(report.detail).toMatch(/quick_check|malformed|corrupt/i);
  });

  it('prunes old server logs to a bounded total', () => {
    const dir = path.join(tempDir(), 'logs');
    fs.mkdirSync(dir);
    for (let i = 0; i < 10; i++) {
      const file = path.join(dir, `old-${i}.log`);
      fs.writeFileSync(file, 'x'.repeat(1000));
      const time = new Date(Date.now() - (10 - i) * 60_000);
      fs.utimesSync(file, time, time);
    }
    const log = new RotatingLogFile(path.join(dir, 'new.log'), { maxBytes: 1000, maxTotalBytes: 5000 });
    log.write('fresh line');
    log.close();
    const left = fs.readdirSync(dir).sort();
    const total = left.reduce((sum, name) => sum + fs.statSync(path.join(dir, name)).size, 0);
    expect(total).toBeLessThanOrEqual(5000);
    expect(left).toContain('new.log');
    // The oldest go first.
    expect(left).not.toContain('old-0.log');
    expect(left).toContain('old-9.log');
  });

  it('rotates a server log at its size limit, keeping one previous file and the newest lines', () => {
    const dir = tempDir();
    const file = path.join(dir, 'server.log');
    const log = new RotatingLogFile(file, { maxBytes: 1000 });
    for (let i = 0; i < 100; i++) log.write(`line ${String(i).padStart(3, '0')} ${'x'.repeat(40)}`);
    log.close();
    expect(fs.readdirSync(dir).sort()).toEqual(['server.log', 'server.log.1']);
    const current = fs.readFileSync(file, 'utf8');
    const previous = fs.readFileSync(`${file}.1`, 'utf8');
    for (const text of [current, previous]) expect(Buffer.byteLength(text)).toBeLessThanOrEqual(1000);
    expect(current.trimEnd().split('\n').at(-1)).toMatch(/^line 099 /);
    // The previous file ends where the current one begins: nothing lost at the seam.
    const lastPrevious = Number(previous.trimEnd().split('\n').at(-1)!.slice(5, 8));
    const firstCurrent = Number(current.split('\n')[0]!.slice(5, 8));
    expect(firstCurrent).toBe(lastPrevious + 1);
  });

  it('recreates a logs folder deleted under a running server, without throwing', () => {
    const dir = path.join(tempDir(), 'logs', 'servers');
    const log = new RotatingLogFile(path.join(dir, 'a.log'), { maxBytes: 200 });
    log.write('before');
    fs.rmSync(path.dirname(dir), { recursive: true, force: true });
    expect(() => {
      for (let i = 0; i < 20; i++) log.write(`after ${i} ${'y'.repeat(20)}`);
    }).not.toThrow();
    log.close();
    expect(fs.existsSync(path.join(dir, 'a.log'))).toBe(true);
    expect(fs.readFileSync(path.join(dir, 'a.log'), 'utf8')).toMatch(/after 19/);
  });
});

describe('permissions', () => {
  it('makes the data and cache folders 0700 and the database, its WAL and the logs 0600', () => {
    const root = tempDir();
    const data = path.join(root, 'data');
    const cache = path.join(root, 'cache');
    fs.mkdirSync(data, { mode: 0o755 });
    fs.chmodSync(data, 0o755);
    secureAppDirs({ INFERLAB_DATA_DIR: data, INFERLAB_CACHE_DIR: cache });
    expect(mode(data)).toBe(0o700);
    expect(mode(cache)).toBe(0o700);

    const fresh = path.join(root, 'new-folder', 'runs.db');
    const db = openDatabase(fresh);
    db.exec('CREATE TABLE IF NOT EXISTS touch (x)');
    expect(mode(path.dirname(fresh))).toBe(0o700);
    expect(mode(fresh)).toBe(0o600);
    expect(mode(`${fresh}-wal`)).toBe(0o600);
    db.close();

    const existing = path.join(data, 'old.db');
    fs.writeFileSync(existing, '', { mode: 0o644 });
    fs.chmodSync(existing, 0o644);
    openDatabase(existing).close();
    expect(mode(existing)).toBe(0o600);

    const logFile = path.join(data, 'logs', 'servers', 'x.log');
    const log = new RotatingLogFile(logFile, { maxBytes: 50 });
    for (let i = 0; i < 5; i++) log.write('z'.repeat(20));
    log.close();
    expect(mode(logFile)).toBe(0o600);
    expect(mode(`${logFile}.1`)).toBe(0o600);
    expect(mode(path.dirname(logFile))).toBe(0o700);
  });
});
