import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { ensurePrivateDir, PRIVATE_FILE_MODE, restrict } from '../core/private-files';
import { MIGRATIONS } from './migrations';

export type Db = Database.Database;

/**
 * Opens (creating if needed) the run database: WAL so readers never block the writer,
 * foreign keys on, and the pending migrations applied under one write lock. The file holds
 * prompts and outputs, so it (and its WAL) is owner-only.
 */
export function openDatabase(file: string): Db {
  try {
    ensurePrivateDir(path.dirname(file));
    // Created here rather than by SQLite so it is 0600 from the first byte; SQLite gives the
    // -wal and -shm files the database file's mode.
    if (!fs.existsSync(file)) fs.writeFileSync(file, '', { flag: 'a', mode: PRIVATE_FILE_MODE });
    else if (fs.statSync(file).isFile()) restrict(file, PRIVATE_FILE_MODE);
  } catch (error) {
    throw new AppError(ErrorCode.StorageFailed, `Cannot create the folder for the database ${file}: ${(error as Error).message}`);
  }
  let db: Db;
  try {
    db = new Database(file);
    // First, so that another process opening the same file at the same moment is waited for.
    db.pragma('busy_timeout = 5000');
    switchToWal(db);
    db.pragma('foreign_keys = ON');
    db.pragma('synchronous = NORMAL');
    // Reads through a memory map, not a read call per page: a run's requests span tens of
    // thousands of overflow pages, and reading them back for a summary took twice as long
    // through read calls (docs/PERFORMANCE.md). SQLite caps the map (2 GiB in this build); writes
    // still go through the WAL. The cost: an I/O error while reading the file ends the process
    // (SIGBUS) instead of failing the query, which on a local disk means the disk is failing.
    db.pragma('mmap_size = 2147483648');
  } catch (error) {
    throw new AppError(
      ErrorCode.StorageFailed,
      `Cannot open the database ${file}: ${(error as Error).message}. Check the path, or pass another with --db.`,
    );
  }
  try {
    migrate(db);
  } catch (error) {
    db.close();
    throw error instanceof AppError
      ? error
      : new AppError(ErrorCode.StorageFailed, `Cannot migrate the database ${file}: ${(error as Error).message}`);
  }
  return db;
}

/**
 * Switching a fresh file to WAL needs a lock the busy handler does not always wait for: a
 * second process opening the same new file at the same moment gets SQLITE_BUSY at once.
 * Retry for as long as busy_timeout would have waited.
 */
function switchToWal(db: Db): void {
  const deadline = Date.now() + 5000;
  for (;;) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() > deadline) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 25);
    }
  }
}

export function schemaVersion(db: Db): number {
  const row = db.prepare('SELECT MAX(version) AS version FROM schema_migrations').get() as { version: number | null };
  return row.version ?? 0;
}

/**
 * Reads the version and applies what is missing under `BEGIN IMMEDIATE`: the write lock is
 * taken before the version is read, so a second process opening the same fresh file waits
 * (busy_timeout) and then finds the work done, instead of both creating the same tables.
 */
function migrate(db: Db): void {
  const newest = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;
  // Up to date (the usual case): no write lock, so opening never waits behind a running writer.
  const tracked = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get() !== undefined;
  if (tracked && schemaVersion(db) === newest) return;
  db.exec('BEGIN IMMEDIATE');
  try {
    db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
    const current = schemaVersion(db);
    if (current > newest) {
      throw new AppError(
        ErrorCode.StorageFailed,
        `The database has schema version ${current}, newer than this Infer Lab understands (${newest}). Update Infer Lab, or use another --db.`,
      );
    }
    const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
    for (const migration of MIGRATIONS) {
      if (migration.version <= current) continue;
      db.exec(migration.sql);
      record.run(migration.version, migration.name, new Date().toISOString());
    }
    db.exec('COMMIT');
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw error;
  }
}

/** `PRAGMA quick_check`: "ok", or the first problems SQLite found (most of a full integrity_check, in a fraction of the time). */
export function quickCheck(db: Db, limit = 5): string[] {
  return (db.prepare(`PRAGMA quick_check(${limit})`).all() as { quick_check: string }[]).map((row) => row.quick_check);
}
