import type { EngineInfo } from '../../shared/contract/engine';
import { userDataDir } from '../core/paths';
import { requireEngine } from '../engines/llamacpp/locate-engine';
import { ServerManager, serverLogDir } from '../server/server-manager';
import type { AppStore } from '../store/app-store';
import { openCliStore } from './store-context';

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
  const { dbPath, store } = await openCliStore(dbOption);
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
