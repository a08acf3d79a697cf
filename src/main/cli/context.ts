import type { EngineInfo } from '../../shared/contract/engine';
import { resolveDatabasePath, userDataDir } from '../core/paths';
import { requireEngine } from '../engines/llamacpp/locate-engine';
import { ServerManager, serverLogDir } from '../server/server-manager';
import { openAppStore, type AppStore } from '../store/app-store';

export interface CliContext {
  dbPath: string;
  store: AppStore;
  servers: ServerManager;
  engine(): Promise<EngineInfo>;
  dispose(): Promise<void>;
}

export { requireEngine };

/** Opens the database (sweeping orphans from dead processes) and a server manager to dispose. */
export async function openCliContext(dbOption: string | undefined): Promise<CliContext> {
  const dbPath = resolveDatabasePath(dbOption);
  const store = await openAppStore(dbPath);
  for (const orphan of store.recovered.orphans.killed) {
    process.stderr.write(`inferlab: stopped an orphaned llama-server (pid ${orphan.pid}, port ${orphan.port}) left by a process that ended\n`);
  }
  if (store.recovered.interruptedRuns > 0) process.stderr.write(`inferlab: marked ${store.recovered.interruptedRuns} unfinished run(s) as interrupted\n`);
  let engine: Promise<EngineInfo> | null = null;
  const resolveEngine = () => (engine ??= requireEngine());
  const servers = new ServerManager(resolveEngine, store.sessions, serverLogDir(userDataDir()));
  return {
    dbPath,
    store,
    servers,
    engine: resolveEngine,
    dispose: async () => {
      await servers.dispose();
      store.close();
    },
  };
}
