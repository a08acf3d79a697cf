/** What the services return: result shapes the main process produces and the renderer reads. */
import type { RunSummary } from './runs';
import type { RequestMetrics, ServerTimings } from './measurement';
import type { ColdStart } from './server';
import type { EngineBuildFacts } from './engine';

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
  /** The folder an imported run was read from; null for a run measured here. */
  importedFrom: string | null;
}

/** A run a list left out because its stored record cannot be read (malformed, or nested too deep), and why. */
export interface SkippedRun {
  runId: string;
  reason: string;
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
  /** The telemetry flattened: a row per sample (t_ms, kind, gpu), a column per field. */
  telemetryCsv: string;
  /**
   * The run as a Mooncake-style trace (JSON Lines: timestamp ms, input_length, output_length,
   * hash_ids): hashes only, no text, so a private run can be shared. Null when its requests
   * have no block hashes (recorded from schema 10 on, for prompts the server could tokenize).
   */
  traceJsonl: string | null;
}

/** A run brought back from an exported folder. */
export interface ImportedRun {
  runId: string;
  requests: number;
  telemetrySeries: number;
  /** The folder it was read from, as recorded with the run. */
  importedFrom: string;
}

/** The store (or one run or experiment) written as Parquet tables. */
export interface ParquetExport {
  folder: string;
  schema_version: number;
  tables: { name: string; file: string; rows: number }[];
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

/** One measured completion on a freshly started server: the demo's first request. */
export interface FirstRequestResult {
  runId: string;
  modelRef: string;
  modelPath: string;
  /** The llama-server that answered: its version and backend. */
  engine: { version: string | null; backend: string | null };
  coldStart: ColdStart | null;
  serverPid: number | null;
  metrics: RequestMetrics;
  timings: ServerTimings | null;
  promptTokens: number | null;
  finishReason: string | null;
  outputText: string;
}

/** What the Settings view shows: where things are (read-only) and what it can change. */
export interface SettingsInfo {
  dataDir: string;
  configFile: string;
  databasePath: string;
  /** The folders this interface may read models from; they change only in the config file (roots.models). */
  modelFolders: string[];
  workloadFolders: string[];
  engine: { serverPath: string; backend: string | null; version: string | null; origin: string; build: EngineBuildFacts | null } | null;
  /** Why no engine was found, when none was. */
  engineProblem: string | null;
  decisionName: string;
  defaultProfile: string;
  telemetryIntervalMs: number;
  telemetryIntervalRangeMs: { min: number; max: number };
}
