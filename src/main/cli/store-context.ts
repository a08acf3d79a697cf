import { resolveDatabasePath } from '../core/paths';
import { openAppStore, type AppStore } from '../store/app-store';

/**
 * The database alone, for commands that only read or record (runs, export, reports,
 * decisions, profiles): opening it still sweeps orphans from dead processes, but no server
 * manager, engine lookup or telemetry is loaded.
 */
export async function openCliStore(dbOption: string | undefined): Promise<{ dbPath: string; store: AppStore }> {
  const dbPath = resolveDatabasePath(dbOption);
  const store = await openAppStore(dbPath);
  for (const orphan of store.recovered.orphans.killed) {
    process.stderr.write(`inferlab: stopped an orphaned llama-server (pid ${orphan.pid}, port ${orphan.port}) left by a process that ended\n`);
  }
  if (store.recovered.interruptedRuns > 0) process.stderr.write(`inferlab: marked ${store.recovered.interruptedRuns} unfinished run(s) as interrupted\n`);
  return { dbPath, store };
}
