import path from 'node:path';
import type { EngineInfo } from '../../src/shared/contract/engine';
import { findFreePort } from '../../src/main/core/ports';
import { SAVED_PROFILE_RULES } from '../../src/main/engines/llamacpp/profile-rules';
import { DEFAULT_TIMEOUTS, type ServerOptions } from '../../src/main/server/managed-server';
import { ServerManager } from '../../src/main/server/server-manager';
import { openAppStore, type AppStore } from '../../src/main/store/app-store';
import { requireEngine } from './engine';

/** A real ServerManager over a fresh database in `dir`; dispose stops every server it started. */
export async function serverHarness(
  dir: string,
  options: Partial<ServerOptions> = {},
  engine: () => Promise<EngineInfo> = requireEngine,
): Promise<{ store: AppStore; servers: ServerManager; dispose(): Promise<void> }> {
  const store = openAppStore(path.join(dir, 'runs.db'), SAVED_PROFILE_RULES);
  const servers = new ServerManager(engine, store.sessions, path.join(dir, 'logs'), {
    timeouts: DEFAULT_TIMEOUTS,
    choosePort: () => findFreePort(),
    ...options,
  });
  return {
    store,
    servers,
    dispose: async () => {
      await servers.dispose();
      store.close();
    },
  };
}
