import type { ErrorShape } from '../errors';
import type { Comparison } from './compare';
import type { DoctorReport } from './doctor';
import type { ExperimentResult, QuantConstraints } from './experiments';
import type { ModelScan } from './models';
import type { RunSummary, SloSpec } from './runs';
import type { ProfileProblem, ServerProfile, ServerSnapshot } from './server';
import type { TelemetryTick } from './telemetry';

/**
 * The services the UI can call, one interface per channel. The main process registers an
 * implementation of `AppServices` (the compiler rejects one that does not match) and the
 * renderer gets a typed proxy over whichever transport exists (IPC or WebSocket).
 */
export interface DoctorService {
  report(): Promise<DoctorReport>;
}

export interface ModelsService {
  /** The GGUF files in `folders` (the usual model folders by default); `hash` adds each file's SHA-256, cached by path, size and time. */
  scan(folders?: string[] | null, options?: { hash?: boolean } | null): Promise<ModelScan>;
  /** Starts llama-quantize; progress arrives as `job.progress` events. New files go beside the source unless `outDir` names a folder. */
  quantize(source: string, types: string[], outDir?: string | null): Promise<{ jobId: string }>;
  /** Stops a quantization: llama-quantize is killed and its partial file removed. */
  cancel(jobId: string): Promise<void>;
}

export interface ServersService {
  list(): Promise<ServerSnapshot[]>;
  profiles(): Promise<ServerProfile[]>;
  defaultProfile(): Promise<ServerProfile>;
  validateProfile(profile: ServerProfile, modelRef: string | null): Promise<ProfileProblem[]>;
  saveProfile(profile: ServerProfile): Promise<void>;
  /** False when no saved profile has the name; the built-in default cannot be deleted. */
  deleteProfile(name: string): Promise<boolean>;
  /** Refused when its threads would oversubscribe the cores beside another llama-server, unless `force`. */
  start(modelRef: string, profile: ServerProfile, force?: boolean): Promise<ServerSnapshot>;
  stop(serverId: string): Promise<ServerSnapshot>;
  logs(serverId: string): Promise<string[]>;
}

export interface WorkloadInfo {
  name: string;
  file: string;
  description: string;
  groups: string[];
  builtin: boolean;
}

export interface WorkloadValidation {
  ok: boolean;
  problems: { line: number | null; column: number | null; field: string; message: string }[];
  items: number;
  /** Input length of each written item: exact from a running llama-server's tokenizer, else an estimate. */
  tokens: { id: string; inputTokens: number; maxTokens: number | null }[];
  tokensExact: boolean;
}

export interface WorkloadsService {
  list(): Promise<WorkloadInfo[]>;
  read(name: string): Promise<{ name: string; file: string; text: string }>;
  validate(text: string): Promise<WorkloadValidation>;
}

/** Everything a run can be asked for, from the UI or the CLI; optional fields take their defaults. */
export interface StartRunSpec {
  workload: string;
  /** A model reference (demo:q8_0 or a GGUF path) or an OpenAI-compatible URL. */
  model: string | null;
  endpoint: string | null;
  /**
   * The environment variable holding the endpoint's API key. Only the CLI may name one; over RPC
   * the key comes from `endpointKeys` in the config file.
   */
  apiKeyEnv?: string | null;
  profileName: string;
  /** FIELD=VALUE settings applied over the profile for this run only. */
  settings?: string[];
  /** Start beside another llama-server that claims the cores. */
  force?: boolean;
  /** Closed loop: requests in flight. Excludes `rate`. */
  concurrency: number | null;
  /** Open loop: requests per second. */
  rate: number | null;
  /** Open loop: 1 = Poisson arrivals, below 1 burstier (gamma), above 1 more regular. */
  burstiness?: number | null;
  /** Open loop: requests outstanding before new arrivals wait. */
  maxOutstanding?: number | null;
  requests: number | null;
  durationS: number | null;
  warmup: number;
  slo?: SloSpec | null;
  firstTokenTimeoutS?: number | null;
  timeoutS?: number | null;
  /** A stored run whose outputs this run's outputs are compared with. */
  referenceRunId?: string | null;
  /** Prometheus metrics to scrape for an endpoint run. */
  metricsUrl?: string | null;
  private: boolean;
}

export interface RunJobState {
  jobId: string;
  phase: 'starting' | 'running' | 'finished' | 'failed';
  runId: string | null;
  message: string;
  sent: number;
  finished: number;
  failed: number;
  /** New (send time in ms on the run's clock — the telemetry clock —, TTFT ms) points since the previous event. */
  ttftPoints: [number, number][];
  outputTokensPerS: number | null;
  /** The text of one sampled request, as it streams. */
  sampleText: string;
  summary: RunSummary | null;
  error: ErrorShape | null;
}

export interface RunListItem {
  runId: string;
  startedAt: string;
  status: string;
  statusReason: string | null;
  model: string | null;
  quantization: string | null;
  engine: string | null;
  workload: string | null;
  kind: string;
  requests: number;
  ttftP50: number | null;
  outputTokensPerS: number | null;
}

export interface RunDetail {
  item: RunListItem;
  summary: RunSummary | null;
  manifest: Record<string, unknown>;
  telemetry: { series: string; unit: string; points: [number, number][] }[];
  /** (t0 ms, TTFT ms) per measured request, for the timeline. */
  requestMarks: [number, number | null][];
}

export interface RunExport {
  fileBase: string;
  manifest: string;
  summary: string;
  requestsJsonl: string;
  requestsCsv: string;
  telemetry: string;
}

export interface RunsService {
  start(spec: StartRunSpec): Promise<{ jobId: string }>;
  cancel(jobId: string): Promise<void>;
  list(): Promise<RunListItem[]>;
  get(runId: string): Promise<RunDetail>;
  remove(runId: string): Promise<boolean>;
  exportRun(runId: string): Promise<RunExport>;
  compare(runIds: string[]): Promise<Comparison>;
}

/** Everything an experiment can be asked for, from the UI or the CLI; optional fields take their defaults. */
export interface StartExperimentSpec {
  kind: 'quant' | 'warmcold' | 'sweep';
  /** quant: the base model (demo:f16 or a GGUF path); warmcold and sweep: the model to serve. */
  model: string;
  /** quant: the types to compare, the first the baseline (f16,q8_0,q4_k_m). */
  quants: string[];
  /** quant: explicit files to compare instead of model + quants, the first the baseline. */
  files?: { name: string; path: string }[] | null;
  workload: string;
  repeats: number;
  requestsPerWindow: number | null;
  /** Requests in flight within a window (quant, warmcold). */
  concurrency?: number | null;
  profileName?: string;
  /** FIELD=VALUE settings applied over the profile. */
  settings?: string[];
  /** quant: gates, budget and objective of the recommendation; sweep: its SLO. */
  constraints?: QuantConstraints | null;
  /** quant: a text file for the KL-divergence pass instead of one generated by the baseline. */
  kldTextFile?: string | null;
  /** warmcold: fresh server starts for cold-process, spread over the windows. */
  coldStarts?: number | null;
  /** warmcold: leave the prompt cache on in cold-cache (its evidence must then flag it). */
  skipCacheReset?: boolean;
  /** sweep: the profile field to vary and its values. */
  vary?: { field: string; values: string[] } | null;
  /** sweep: the load levels (concurrency) every setting runs at. */
  loadConcurrencies?: number[] | null;
}

export interface ExperimentListItem {
  experimentId: string;
  kind: string;
  status: string;
  createdAt: string;
  recommendation: string | null;
}

export interface DecisionRecord {
  decision_id: string;
  experiment_id: string;
  chosen: string;
  chosen_run_ids: string[];
  reason: string;
  decided_by: string;
  decided_at: string;
}

export interface ExperimentsService {
  start(spec: StartExperimentSpec): Promise<{ jobId: string }>;
  /** Stops an experiment after its current request; it is stored as interrupted, its finished windows kept. */
  cancel(jobId: string): Promise<void>;
  list(): Promise<ExperimentListItem[]>;
  get(experimentId: string): Promise<ExperimentResult | null>;
  decide(experimentId: string, chosen: string, reason: string, decidedBy: string): Promise<DecisionRecord>;
  decisions(): Promise<DecisionRecord[]>;
}

export interface ExperimentJobState {
  jobId: string;
  phase: 'running' | 'finished' | 'failed' | 'cancelled';
  message: string;
  result: ExperimentResult | null;
  error: ErrorShape | null;
}

export interface AppServices {
  doctor: DoctorService;
  models: ModelsService;
  servers: ServersService;
  workloads: WorkloadsService;
  runs: RunsService;
  experiments: ExperimentsService;
}

export type ServiceName = keyof AppServices;

/**
 * The allow-list of callable methods per service. A request for anything else is refused
 * at the boundary, whatever the implementation object happens to carry.
 */
export const SERVICE_METHODS = {
  doctor: ['report'],
  models: ['scan', 'quantize', 'cancel'],
  servers: ['list', 'profiles', 'defaultProfile', 'validateProfile', 'saveProfile', 'deleteProfile', 'start', 'stop', 'logs'],
  workloads: ['list', 'read', 'validate'],
  runs: ['start', 'cancel', 'list', 'get', 'remove', 'exportRun', 'compare'],
  experiments: ['start', 'cancel', 'list', 'get', 'decide', 'decisions'],
} as const satisfies { [S in ServiceName]: readonly (keyof AppServices[S] & string)[] };

export interface JobProgress {
  jobId: string;
  kind: 'quantize';
  label: string;
  done: number;
  total: number | null;
  finished: boolean;
  error: ErrorShape | null;
}

/** Events pushed from main: whole-state snapshots keyed by channel name. */
export interface AppEvents {
  'server.state': ServerSnapshot;
  'run.progress': RunJobState;
  'telemetry.tick': { jobId: string; tick: TelemetryTick };
  'job.progress': JobProgress;
  'experiment.progress': ExperimentJobState;
}

export type EventName = keyof AppEvents;
export const EVENT_NAMES: readonly EventName[] = ['server.state', 'run.progress', 'telemetry.tick', 'job.progress', 'experiment.progress'];

export interface EventSink {
  emit<E extends EventName>(name: E, payload: AppEvents[E]): void;
}

export interface RpcRequest {
  service: string;
  method: string;
  args: unknown[];
}

export type RpcResponse = { ok: true; result: unknown } | { ok: false; error: ErrorShape };

/** Channel names used by the Electron IPC transport and the preload bridge. */
export const IPC_CALL_CHANNEL = 'inferlab:call';
export const IPC_EVENT_CHANNEL = 'inferlab:event';

export type { DoctorReport } from './doctor';
