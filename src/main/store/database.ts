import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { MIGRATIONS } from './migrations';

export type Db = Database.Database;

/**
 * Opens (creating if needed) the run database: WAL so readers never block the writer,
 * foreign keys on, and every pending migration applied in one transaction each.
 */
export function openDatabase(file: string): Db {
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
  } catch (error) {
    throw new AppError(ErrorCode.StorageFailed, `Cannot create the folder for the database ${file}: ${(error as Error).message}`);
  }
  let db: Db;
  try {
    db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.pragma('foreign_keys = ON');
    db.pragma('busy_timeout = 5000');
    db.pragma('synchronous = NORMAL');
  } catch (error) {
    throw new AppError(ErrorCode.StorageFailed, `Cannot open the database ${file}: ${(error as Error).message}. Check the path, or pass another with --db.`);
  }
  try {
    migrate(db);
  } catch (error) {
    db.close();
    throw error instanceof AppError ? error : new AppError(ErrorCode.StorageFailed, `Cannot migrate the database ${file}: ${(error as Error).message}`);
  }
  return db;
}

export function schemaVersion(db: Db): number {
  const row = db.prepare('SELECT MAX(version) AS version FROM schema_migrations').get() as { version: number | null };
  return row.version ?? 0;
}

function migrate(db: Db): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  const current = schemaVersion(db);
  const newest = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;
  if (current > newest) {
    throw new AppError(ErrorCode.StorageFailed, `The database has schema version ${current}, newer than this Infer Lab understands (${newest}). Update Infer Lab, or use another --db.`);
  }
  const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
  for (const migration of MIGRATIONS) {
    if (migration.version <= current) continue;
    db.transaction(() => {
      db.exec(migration.sql);
      record.run(migration.version, migration.name, new Date().toISOString());
    })();
  }
}
