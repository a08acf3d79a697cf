import { ProfileStore } from './profile-store';
import { ServerSessionStore, type OrphanSweep } from './server-sessions';
import { openDatabase, type Db } from './database';
import { RunStore } from './run-store';

export interface AppStore {
  db: Db;
  runs: RunStore;
  sessions: ServerSessionStore;
  profiles: ProfileStore;
  /** What start-up cleaned: orphaned servers killed, runs marked interrupted. */
  recovered: { orphans: OrphanSweep; interruptedRuns: number };
  close(): void;
}

/**
 * Opens the database the way every entry point must: migrate, then clean up after any
 * process that died holding servers or runs (kill its orphaned servers, mark its runs
 * interrupted with their requests kept).
 */
export async function openAppStore(file: string): Promise<AppStore> {
  const db = openDatabase(file);
  const runs = new RunStore(db);
  const sessions = new ServerSessionStore(db);
  const orphans = await sessions.sweepOrphans();
  const interruptedRuns = runs.markAbandonedRunsInterrupted();
  return { db, runs, sessions, profiles: new ProfileStore(db), recovered: { orphans, interruptedRuns }, close: () => db.close() };
}
