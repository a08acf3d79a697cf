import type { AppEvents, AppServices, EventName, EventSink } from '../shared/contract';
import { Emitter } from './core/emitter';
import { resolveDatabasePath, userDataDir } from './core/paths';
import { runDoctor } from './doctor';
import { requireEngine } from './engines/llamacpp/locate-engine';
import { ServerManager, serverLogDir } from './server/server-manager';
import { createModelsService } from './services/models-service';
import { createRunsService } from './services/runs-service';
import { createServersService } from './services/servers-service';
import { createWorkloadsService } from './services/workloads-service';
import { openAppStore } from './store/app-store';

export interface ServiceOptions {
  dbPath?: string;
}

export interface AppEvent {
  name: EventName;
  payload: AppEvents[EventName];
}

export interface ServiceContainer {
  services: AppServices;
  /** Every event, for transports to forward. */
  events: Emitter<AppEvent>;
  dbPath: string;
  dispose(): Promise<void>;
}

/**
 * Composition root: builds every service once and disposes them in reverse order (runs
 * cancelled, then servers stopped, then the database closed). The Electron entry, the
 * headless server and tests all start here; nothing is a singleton.
 */
export async function createServices(options: ServiceOptions = {}): Promise<ServiceContainer> {
  const dbPath = resolveDatabasePath(options.dbPath);
  const store = await openAppStore(dbPath);
  const events = new Emitter<AppEvent>();
  const sink: EventSink = { emit: (name, payload) => events.emit({ name, payload }) };
  let engine: ReturnType<typeof requireEngine> | null = null;
  const resolveEngine = () => (engine ??= requireEngine().catch((error) => {
    engine = null;
    throw error;
  }));
  const servers = new ServerManager(resolveEngine, store.sessions, serverLogDir(userDataDir()));
  const models = createModelsService(resolveEngine, sink);
  const serversService = createServersService(servers, store.profiles, sink);
  const runs = createRunsService({ store, servers, engine: resolveEngine, events: sink });
  const services: AppServices = {
    doctor: { report: () => runDoctor({ dbPath }) },
    models,
    servers: serversService,
    workloads: createWorkloadsService(),
    runs,
  };
  return {
    services,
    events,
    dbPath,
    async dispose() {
      await runs.dispose();
      models.dispose();
      serversService.dispose();
      await servers.dispose();
      events.clear();
      store.close();
    },
  };
}
