/**
 * The contract between the main process and its faces (the renderer over IPC or WebSocket, the
 * CLI in process). The services are declared in `services.ts`; this module gathers the types
 * and the event map. The renderer imports types only from here, so no schema code reaches it.
 */
import type { ErrorShape } from '../errors';
import type { TaskProgress } from './tasks';
import type { ServerSnapshot } from './server';
import type { TelemetryTick } from './telemetry';

export type {
  AppServices,
  DemoService,
  DoctorService,
  EngineService,
  ExperimentsService,
  MethodName,
  ModelsService,
  RunsService,
  ServersService,
  ServiceName,
  SettingsService,
  TasksService,
  WorkloadsService,
} from './services';
export type {
  EngineSetupOptions,
  FirstRequestSpec,
  ServerStartOptions,
  QuantConstraints,
  QualityGate,
  QuantObjective,
  ServerProfile,
  SettingsChanges,
  SloSpec,
  StartExperimentSpec,
  StartRunSpec,
  LiveRaceRequest,
  ExperimentKind,
  ExperimentSpecOf,
} from './specs';
export type {
  DecisionRecord,
  ExperimentListItem,
  FirstRequestResult,
  ImportedRun,
  ParquetExport,
  RunDetail,
  RunExport,
  RunListItem,
  SettingsInfo,
  SkippedRun,
  WorkloadInfo,
  WorkloadValidation,
} from './results';
export type { DoctorReport } from './doctor';
export type {
  ExperimentTaskProgress,
  RaceTaskProgress,
  RunTaskDetail,
  RunTaskProgress,
  TaskKind,
  TaskListItem,
  TaskPhase,
  TaskProgress,
  ToolTaskProgress,
} from './tasks';
export type { HistoryBuild, HistoryConfiguration, HistoryQuery, HistoryRun, MetricHistory } from './history';

/** Events pushed from main: whole-state snapshots keyed by channel name. */
export interface AppEvents {
  'server.state': ServerSnapshot;
  /** New log lines of a managed server, batched (at most every 250 ms). */
  'server.log': { serverId: string; lines: string[] };
  /** Every task's progress (runs, experiments, quantization, pulls, setup), run progress at most every 200 ms. */
  'task.progress': TaskProgress;
  'telemetry.tick': { jobId: string; tick: TelemetryTick };
}

export type EventName = keyof AppEvents;

/** Every event name, for the transport to check a subscription against; the record makes a new event a compile error here until listed. */
const EVENT_NAME_SET: Record<EventName, true> = {
  'server.state': true,
  'server.log': true,
  'task.progress': true,
  'telemetry.tick': true,
};
export const EVENT_NAMES = Object.keys(EVENT_NAME_SET) as EventName[];

export interface EventSink {
  emit<E extends EventName>(name: E, payload: AppEvents[E]): void;
}

export interface RpcRequest {
  service: string;
  method: string;
  args: unknown[];
}

export type RpcResponse = { ok: true; result: unknown } | { ok: false; error: ErrorShape };
