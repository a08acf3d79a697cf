/**
 * A task is a long operation a face starts and may cancel: a run, an experiment, a race, a
 * quantization, a pull, an engine setup. Every task reports with one payload, `TaskProgress`,
 * on one event, `task.progress`; what differs by kind travels in `detail`.
 */
import type { ErrorShape } from '../errors';
import type { ExperimentResult } from './experiments';
import type { Race } from '../race';
import type { RunSummary } from './runs';

export type TaskKind = 'run' | 'experiment' | 'race' | 'quantize' | 'setup' | 'pull';

/**
 * starting → running → finished | failed | cancelled. Cancelled is an outcome of its own: the
 * user asked for it, so it carries no error; what was measured before it is kept in `detail`.
 */
export type TaskPhase = 'starting' | 'running' | 'finished' | 'failed' | 'cancelled';

interface TaskProgressOf<K extends TaskKind, D> {
  jobId: string;
  kind: K;
  phase: TaskPhase;
  /** What the task is doing now, in a line; after the end, how it ended. */
  message: string;
  /** Steps, tensors, bytes or requests done, of `total` (null when the total is not known). */
  done: number;
  total: number | null;
  /** Set only when the phase is `failed`. */
  error: ErrorShape | null;
  detail: D;
}

/** A run's live view: `done` counts its finished requests (failed ones included) of `total` planned. */
export interface RunTaskDetail {
  runId: string | null;
  sent: number;
  failed: number;
  /** New (send time in ms on the run's clock — the telemetry clock —, TTFT ms) points since the previous event. */
  ttftPoints: [number, number][];
  outputTokensPerS: number | null;
  /** The text of one sampled request, as it streams. */
  sampleText: string;
  summary: RunSummary | null;
}

export type RunTaskProgress = TaskProgressOf<'run', RunTaskDetail>;
export type ExperimentTaskProgress = TaskProgressOf<'experiment', { result: ExperimentResult | null }>;
/** A live race: `done` counts the lanes measured; the race arrives with the end, its lanes' runs stored. */
export type RaceTaskProgress = TaskProgressOf<'race', { race: Race | null }>;
/** Quantization (tensors), pull (bytes) and setup (build steps, compile percent) need nothing beyond the counters. */
export type ToolTaskProgress = TaskProgressOf<'quantize' | 'setup' | 'pull', null>;
export type TaskProgress = RunTaskProgress | ExperimentTaskProgress | RaceTaskProgress | ToolTaskProgress;

/**
 * A task as `tasks.list` shows it: its progress without the kind's detail (a run's summary, an
 * experiment's result travel on `task.progress`), and when it started and ended.
 */
export type TaskListItem = Omit<TaskProgress, 'detail'> & { startedAt: string; endedAt: string | null };
