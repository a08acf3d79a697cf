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
  reportRecovered(store.recovered);
  return { dbPath, store };
}

/** Says what opening the database cleaned up after processes that died. */
export function reportRecovered(recovered: AppStore['recovered']): void {
  for (const orphan of recovered.orphans.killed) {
    process.stderr.write(
      `inferlab: stopped an orphaned llama-server (pid ${orphan.pid}, port ${orphan.port}) left by a process that ended\n`,
    );
  }
  if (recovered.interruptedRuns > 0)
    process.stderr.write(`inferlab: marked ${recovered.interruptedRuns} unfinished run(s) as interrupted\n`);
}
