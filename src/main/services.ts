import type { AppEvents, AppServices, EventName, EventSink, TasksService } from '../shared/contract';
import type { EngineInfo } from '../shared/contract/engine';
import type { StartupRecovery } from '../shared/contract/server';
import { Emitter } from './core/emitter';
import { resolveDatabasePath, secureAppDirs, userDataDir } from './core/paths';
import type { ServerManager } from './server/server-manager';
import type { LocalDemoService } from './services/demo-service';
import type { LocalEngineService } from './services/engine-service';
import type { LocalExperimentsService } from './services/experiments-service';
import type { LocalModelsService } from './services/models-service';
import type { LocalServersService } from './services/servers-service';
import type { LocalRunsService } from './services/runs-service';
import { rpcAccess, type ServiceAccess } from './services/access';
import { SAVED_PROFILE_RULES } from './engines/llamacpp/profile-rules';
import { sweepOrphanedServers } from './server/orphan-sweep';
import { openAppStore } from './store/app-store';
import { TaskRunner } from './services/tasks';
import type { TelemetrySession } from './telemetry/telemetry-session';

export interface ServiceOptions {
  dbPath?: string;
  /** What callers of these services may reach; requests over RPC by default (configured roots only). */
  access?: ServiceAccess;
  /** Sample the GPU between runs for the live view (serve, the desktop app); CLI commands need none. */
  idleTelemetry?: boolean;
  /** The llama-server every managed server of this container runs, over the configured one (the CLI's own choice; RPC cannot name one). */
  llamaServerPath?: string;
}

export interface AppEvent {
  name: EventName;
  payload: AppEvents[EventName];
}

export interface ServiceContainer {
  services: AppServices;
  /** The same runs, experiments and models services with their awaitable forms, for in-process callers (the CLI). */
  runs: LocalRunsService;
  experiments: LocalExperimentsService;
  models: LocalModelsService;
  engine: LocalEngineService;
  servers: LocalServersService;
  demo: LocalDemoService;
  /** Every long operation's task, listed and cancelled in one place. */
  tasks: TasksService;
  /** What opening the database cleaned up after dead processes. */
  recovered: StartupRecovery;
  /** Every event, for transports to forward. */
  events: Emitter<AppEvent>;
  dbPath: string;
  /** What the RPC face may reach; the desktop app adds the files chosen in its file dialog. */
  access: ServiceAccess;
  dispose(): Promise<void>;
}

/** A value built on first use, once; `built()` says whether it was, for disposal. */
function onFirstUse<T>(build: () => Promise<T>): { get: () => Promise<T>; built: () => Promise<T> | null } {
  let value: Promise<T> | null = null;
  return { get: () => (value ??= build()), built: () => value };
}

/**
 * A service whose module loads on its first call. Every service method is async, so a call can
 * wait for the load; a CLI command that lists runs never loads the runner, the server manager
 * or the experiments.
 */
function deferred<T extends object>(load: () => Promise<T>): T {
  return new Proxy({} as T, {
    get: (_target, method) =>
      typeof method === 'string' && method !== 'then'
        ? async (...args: unknown[]) => {
            const service = (await load()) as Record<string, (...callArgs: unknown[]) => unknown>;
            const fn = service[method];
            if (typeof fn !== 'function') throw new TypeError(`No service method ${method}`);
            return fn.apply(service, args);
          }
        : undefined,
  });
}

/** Server log lines as `server.log` events, batched per server every 250 ms so a chatty log costs few messages. */
function forwardLogLines(manager: ServerManager, sink: EventSink): void {
  const pending = new Map<string, string[]>();
  let timer: NodeJS.Timeout | null = null;
  const flush = () => {
    timer = null;
    for (const [serverId, lines] of pending) sink.emit('server.log', { serverId, lines });
    pending.clear();
  };
  manager.logLines.on(({ serverId, line }) => {
    const lines = pending.get(serverId) ?? [];
    lines.push(line);
    pending.set(serverId, lines);
    timer ??= setTimeout(flush, 250).unref();
  });
}

/** The services that start no work of their own: workloads (with a ready server for exact token counts), settings, the doctor. */
function readServicesOnFirstUse(
  access: ServiceAccess,
  dbPath: string,
  resolveEngine: () => Promise<EngineInfo>,
  store: ReturnType<typeof openAppStore>,
  serverManager: () => ServerManager | null,
) {
  const workloads = onFirstUse(async () => {
    const { createWorkloadsService } = await import('./services/workloads-service');
    // A running llama-server makes the workload preview's token counts exact.
    return createWorkloadsService(access, () => {
      const manager = serverManager();
      const ready = manager?.list().find((server) => server.state === 'ready' && server.engine === 'llama.cpp');
      return ready && manager ? manager.get(ready.id).address : null;
    });
  });
  const settings = onFirstUse(async () => {
    const { createSettingsService } = await import('./services/settings-service');
    return createSettingsService({ access, dbPath, engine: resolveEngine, profiles: store.profiles });
  });
  const doctor = onFirstUse(async () => {
    const { runDoctor } = await import('./doctor');
    return { report: () => runDoctor({ dbPath }) };
  });
  return { workloads, settings, doctor };
}

/** The server manager, built on first use; the workload preview asks synchronously for it, and only one that exists counts. */
function serverManagerOnFirstUse(resolveEngine: () => Promise<EngineInfo>, store: ReturnType<typeof openAppStore>, sink: EventSink) {
  let built: ServerManager | null = null;
  const handle = onFirstUse(async (): Promise<ServerManager> => {
    const { ServerManager, serverLogDir } = await import('./server/server-manager');
    const manager = new ServerManager(resolveEngine, store.sessions, serverLogDir(userDataDir()));
    manager.changes.on((snapshot) => sink.emit('server.state', snapshot));
    forwardLogLines(manager, sink);
    built = manager;
    return manager;
  });
  return { handle, now: () => built };
}

/** The engine, located once on first use and again after a failure or a new setup. */
function engineLocator(llamaServerPath: string | undefined): { resolve: () => Promise<EngineInfo>; forget: () => void } {
  let engine: Promise<EngineInfo> | null = null;
  const resolve = () =>
    (engine ??= import('./engines/llamacpp/locate-engine').then(({ requireEngine }) =>
      requireEngine(llamaServerPath ? { ...process.env, INFERLAB_LLAMA_SERVER: llamaServerPath } : process.env),
    )).catch((error: unknown) => {
      engine = null;
      throw error;
    });
  return { resolve, forget: () => (engine = null) };
}

/** Between runs the GPU is sampled at 1 Hz for the live view; a run samples at 4 Hz itself. */
function idleSampler(sink: EventSink): { set: (on: boolean) => void; stop: () => Promise<void> } {
  let idle: Promise<TelemetrySession> | null = null;
  const set = (on: boolean) => {
    if (on && !idle) {
      idle = import('./telemetry/telemetry-session').then(({ TelemetrySession }) => {
        const origin = performance.now();
        const session = new TelemetrySession({
          clock: () => performance.now() - origin,
          serverPid: null,
          metricsUrl: null,
          intervalMs: 1000,
          retainSamples: 3600,
        });
        session.ticks.on((tick) => sink.emit('telemetry.tick', { jobId: 'idle', tick }));
        session.start();
        return session;
      });
    } else if (!on && idle) {
      const stopping = idle;
      idle = null;
      void stopping.then((session) => session.stop());
    }
  };
  const stop = async () => {
    const sampler = idle;
    idle = null;
    await (await sampler)?.stop();
  };
  return { set, stop };
}

/**
 * Composition root: builds the one task runner, each service once, on first use, and disposes
 * in reverse order (every task cancelled and awaited, then servers stopped, then the database
 * closed). The Electron
 * entry, the headless server, the CLI and tests all start here; nothing is a singleton.
 */
export async function createServices(options: ServiceOptions = {}): Promise<ServiceContainer> {
  secureAppDirs();
  const dbPath = resolveDatabasePath(options.dbPath);
  const access = options.access ?? rpcAccess();
  const store = openAppStore(dbPath, SAVED_PROFILE_RULES);
  const recovered: StartupRecovery = { orphans: await sweepOrphanedServers(store.sessions), interruptedRuns: store.interruptedRuns };
  const events = new Emitter<AppEvent>();
  const sink: EventSink = { emit: (name, payload) => events.emit({ name, payload }) };
  const engine = engineLocator(options.llamaServerPath);
  const resolveEngine = engine.resolve;

  const servers = serverManagerOnFirstUse(resolveEngine, store, sink);
  const idle = idleSampler(sink);
  if (options.idleTelemetry !== false) idle.set(true);
  // The one runner of every long operation; a run samples the GPU itself, so idle sampling pauses while one goes.
  const tasks = new TaskRunner(sink, { kinds: ['run'], onChange: (active) => options.idleTelemetry !== false && idle.set(!active) });
  const tasksService: TasksService = { list: async () => tasks.list(), cancel: async (jobId) => tasks.cancel(jobId) };

  const work = () => ({ store, servers: servers.handle.get, access, engine: resolveEngine, events: sink, tasks });
  const runs = onFirstUse(async () => {
    const { createRunsService } = await import('./services/runs-service');
    return createRunsService(work());
  });
  const experiments = onFirstUse(async () => {
    const { createExperimentsService } = await import('./services/experiments-service');
    return createExperimentsService(work());
  });
  const models = onFirstUse(async () => {
    const { createModelsService } = await import('./services/models-service');
    return createModelsService(resolveEngine, tasks, access, store.runs.hashes, (modelPath) => store.runs.latestDecodeOf(modelPath));
  });
  const engineService = onFirstUse(async () => {
    const { createEngineService } = await import('./services/engine-service');
    // After a setup the next server start locates the engine again: it may be a new build.
    return createEngineService(tasks, engine.forget);
  });
  const serversService = onFirstUse(async () => {
    const [{ createServersService }, manager] = await Promise.all([import('./services/servers-service'), servers.handle.get()]);
    return createServersService(manager, store.profiles, access);
  });
  const demo = onFirstUse(async () => {
    const { createDemoService } = await import('./services/demo-service');
    return createDemoService(work());
  });
  const readOnly = readServicesOnFirstUse(access, dbPath, resolveEngine, store, servers.now);

  // One proxy per service: the RPC face and the in-process face call the same object.
  const faces = {
    runs: deferred(runs.get),
    experiments: deferred(experiments.get),
    models: deferred(models.get),
    engine: deferred(engineService.get),
    servers: deferred(serversService.get),
    demo: deferred(demo.get),
  };
  const services: AppServices = {
    ...faces,
    tasks: tasksService,
    doctor: deferred(readOnly.doctor.get),
    settings: deferred(readOnly.settings.get),
    workloads: deferred(readOnly.workloads.get),
  };
  return {
    services,
    ...faces,
    tasks: tasksService,
    recovered,
    events,
    dbPath,
    access,
    async dispose() {
      // Every task cancelled and awaited (a run keeps its finished requests), then the servers stopped.
      await tasks.dispose();
      await idle.stop();
      await (await servers.handle.built())?.dispose();
      events.clear();
      store.close();
    },
  };
}
