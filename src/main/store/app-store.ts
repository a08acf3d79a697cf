import { ProfileStore, type ProfileRules } from './profile-store';
import { ServerSessionStore } from './server-sessions';
import { openDatabase, type Db } from './database';
import { RunStore } from './run-store';

export interface AppStore {
  db: Db;
  runs: RunStore;
  sessions: ServerSessionStore;
  profiles: ProfileStore;
  /** Runs left unfinished by a process that died, marked interrupted (their requests kept) on opening. */
  interruptedRuns: number;
  close(): void;
}

/**
 * Opens the database the way every entry point must: migrate, then mark the runs of any
 * process that died as interrupted, with their requests kept. Stopping the servers such a
 * process left behind is the server layer's (server/orphan-sweep.ts).
 */
export function openAppStore(file: string, profileRules: ProfileRules): AppStore {
  const db = openDatabase(file);
  const runs = new RunStore(db);
  const interruptedRuns = runs.markAbandonedRunsInterrupted();
  return {
    db,
    runs,
    sessions: new ServerSessionStore(db),
    profiles: new ProfileStore(db, profileRules),
    interruptedRuns,
    close: () => db.close(),
  };
}
