import type { AppEvents, AppServices, EventName, EventSink } from '../shared/contract';
import { Emitter } from './core/emitter';
import { resolveDatabasePath, secureAppDirs, userDataDir } from './core/paths';
import { runDoctor } from './doctor';
import { requireEngine } from './engines/llamacpp/locate-engine';
import { ServerManager, serverLogDir } from './server/server-manager';
import { createExperimentsService, type LocalExperimentsService } from './services/experiments-service';
import { createModelsService, type LocalModelsService } from './services/models-service';
import { createRunsService, type LocalRunsService } from './services/runs-service';
import { createServersService } from './services/servers-service';
import { createWorkloadsService } from './services/workloads-service';
import { rpcAccess, type ServiceAccess } from './services/access';
import { openAppStore, type AppStore } from './store/app-store';
import { TelemetrySession } from './telemetry/telemetry-session';

export interface ServiceOptions {
  dbPath?: string;
  /** What callers of these services may reach; requests over RPC by default (configured roots only). */
  access?: ServiceAccess;
  /** Sample the GPU between runs for the live view (serve, the desktop app); CLI commands need none. */
  idleTelemetry?: boolean;
}

export interface AppEvent {
  name: EventName;
  payload: AppEvents[EventName];
}

export interface ServiceContainer {
  services: AppServices;
  /** The same runs and experiments services with their awaitable forms, for in-process callers (the CLI). */
  runs: LocalRunsService;
  experiments: LocalExperimentsService;
  models: LocalModelsService;
  /** What opening the database cleaned up after dead processes. */
  recovered: AppStore['recovered'];
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
  secureAppDirs();
  const dbPath = resolveDatabasePath(options.dbPath);
  const access = options.access ?? rpcAccess();
  const store = await openAppStore(dbPath);
  const events = new Emitter<AppEvent>();
  const sink: EventSink = { emit: (name, payload) => events.emit({ name, payload }) };
  let engine: ReturnType<typeof requireEngine> | null = null;
  const resolveEngine = () =>
    (engine ??= requireEngine().catch((error) => {
      engine = null;
      throw error;
    }));
  const servers = new ServerManager(resolveEngine, store.sessions, serverLogDir(userDataDir()));
  const models = createModelsService(resolveEngine, sink, access, store.runs.hashes);
  const serversService = createServersService(servers, store.profiles, sink, access);
  // Between runs the GPU is sampled at 1 Hz for the live view; a run samples at 4 Hz itself.
  let idle: TelemetrySession | null = null;
  const setIdleSampling = (on: boolean) => {
    if (on && !idle) {
      const origin = performance.now();
      idle = new TelemetrySession({
        clock: () => performance.now() - origin,
        serverPid: null,
        metricsUrl: null,
        intervalMs: 1000,
        retainSamples: 3600,
      });
      idle.ticks.on((tick) => sink.emit('telemetry.tick', { jobId: 'idle', tick }));
      idle.start();
    } else if (!on && idle) {
      void idle.stop();
      idle = null;
    }
  };
  if (options.idleTelemetry !== false) setIdleSampling(true);
  const runs = createRunsService({
    store,
    servers,
    access,
    engine: resolveEngine,
    events: sink,
    onActiveChange: (active) => options.idleTelemetry !== false && setIdleSampling(!active),
  });
  const experiments = createExperimentsService({ store, servers, access, engine: resolveEngine, events: sink });
  const services: AppServices = {
    doctor: { report: () => runDoctor({ dbPath }) },
    models,
    servers: serversService,
    // A running llama-server makes the workload preview's token counts exact.
    workloads: createWorkloadsService(access, () => {
      const ready = servers.list().find((server) => server.state === 'ready' && server.engine === 'llama.cpp');
      return ready ? servers.get(ready.id).address : null;
    }),
    runs,
    experiments,
  };
  return {
    services,
    runs,
    experiments,
    models,
    recovered: store.recovered,
    events,
    dbPath,
    async dispose() {
      await experiments.dispose();
      await runs.dispose();
      const sampler = idle as TelemetrySession | null;
      idle = null;
      await sampler?.stop();
      models.dispose();
      serversService.dispose();
      await servers.dispose();
      events.clear();
      store.close();
    },
  };
}
