import crypto from 'node:crypto';
import type { EventSink, TaskKind, TaskListItem, TaskPhase, TaskProgress, ToolTaskProgress } from '../../shared/contract';
import type { Disposable } from '../core/disposable';
import { Cancelled, toErrorShape } from '../core/errors';

/**
 * How a task ended. Cancelled is an outcome of its own, not a failure; it keeps what the work
 * returned, if it returned (a cancelled run still has the summary of its finished requests).
 */
export type TaskOutcome<T> =
  { status: 'finished'; value: T } | { status: 'cancelled'; value: T | null } | { status: 'failed'; error: unknown };

/** A task as it was started: its id, and its outcome (which never rejects). */
export interface LaunchedTask<T> {
  jobId: string;
  outcome: Promise<TaskOutcome<T>>;
}

/** What a task's work holds: its signal, and its progress to change and send. */
export interface TaskControl<P extends TaskProgress> {
  readonly signal: AbortSignal;
  readonly progress: P;
  /** Sends the progress: at once when `now`, else at most once per the task's interval. True when it went. */
  send(now?: boolean): boolean;
  /** starting → running, sent at once; a task already running stays so. */
  running(message?: string): void;
}

/** A task to launch: its kind and first detail, the work, and how its end reads. */
export interface TaskDefinition<P extends TaskProgress, T> {
  kind: P['kind'];
  detail: P['detail'];
  total?: number | null;
  work: (task: TaskControl<P>) => Promise<T>;
  /** Writes what the work returned into the progress (a run's summary, an experiment's result). */
  settle?: (progress: P, value: T) => void;
  /** The line a cancelled task ends with. */
  cancelledMessage?: string;
  /** The least time between two sends that are not `now`; 0 sends every one. */
  sendIntervalMs?: number;
  /** Told when the task has ended, however it ended. */
  onEnd?: () => void;
}

interface RunningTask {
  controller: AbortController;
  outcome: Promise<unknown>;
  progress: TaskProgress;
  startedAt: string;
}

/** How many ended tasks `list` still shows, so a face that connects late sees how the last ones ended. */
const ENDED_KEPT = 20;

/** Who is told when tasks of some kinds start and stop: the first such task started, the last ended. */
export interface TaskActivity {
  /** The kinds that count; every kind when absent. */
  kinds?: readonly TaskKind[];
  onChange: (active: boolean) => void;
}

function listItem(progress: TaskProgress, startedAt: string, endedAt: string | null): TaskListItem {
  const { detail: _detail, ...item } = progress;
  return { ...item, error: item.error && { ...item.error }, startedAt, endedAt };
}

/**
 * The one place long operations run: runs, experiments, races, quantization, pulls and engine setup.
 * The composition root builds one and hands it to every service, so one `tasks.list` sees them
 * all and one `tasks.cancel` stops any. Each is registered before its work starts (so a cancel
 * that arrives at once is not lost), moves starting → running → finished | failed | cancelled,
 * reports on `task.progress` with one payload shape, and is awaited on shutdown: disposing the
 * runner cancels every task and waits for each to end.
 */
export class TaskRunner implements Disposable {
  private readonly tasks = new Map<string, RunningTask>();
  private readonly ended: TaskListItem[] = [];
  private activeCount = 0;

  constructor(
    private readonly events: EventSink,
    /** Told true when the first task (of the kinds named) starts and false when the last one ends. */
    private readonly activity?: TaskActivity | ((active: boolean) => void),
  ) {}

  private countsActive(kind: TaskKind): boolean {
    const kinds = typeof this.activity === 'object' ? this.activity.kinds : undefined;
    return !kinds || kinds.includes(kind);
  }

  private activeChanged(active: boolean): void {
    if (typeof this.activity === 'function') this.activity(active);
    else this.activity?.onChange(active);
  }

  launch<P extends TaskProgress, T>(definition: TaskDefinition<P, T>): LaunchedTask<T> {
    const jobId = crypto.randomUUID();
    const controller = new AbortController();
    const progress = {
      jobId,
      kind: definition.kind,
      phase: 'starting',
      message: 'starting',
      done: 0,
      total: definition.total ?? null,
      error: null,
      detail: definition.detail,
    } as P;
    const sender = new ProgressSender(this.events, progress, definition.sendIntervalMs ?? 0);
    const control: TaskControl<P> = {
      signal: controller.signal,
      progress,
      send: (now = false) => sender.send(now),
      running: (message) => {
        if (message !== undefined) progress.message = message;
        if (progress.phase === 'starting') progress.phase = 'running';
        sender.send(true);
      },
    };
    const task: RunningTask = { controller, outcome: Promise.resolve(), progress, startedAt: new Date().toISOString() };
    const counts = this.countsActive(definition.kind);
    this.tasks.set(jobId, task);
    if (counts && ++this.activeCount === 1) this.activeChanged(true);
    sender.send(true);
    const outcome = this.drive(definition, control, sender).finally(() => {
      definition.onEnd?.();
      this.tasks.delete(jobId);
      this.ended.push(listItem(progress, task.startedAt, new Date().toISOString()));
      this.ended.splice(0, Math.max(0, this.ended.length - ENDED_KEPT));
      if (counts && --this.activeCount === 0) this.activeChanged(false);
    });
    task.outcome = outcome;
    return { jobId, outcome };
  }

  private async drive<P extends TaskProgress, T>(
    definition: TaskDefinition<P, T>,
    control: TaskControl<P>,
    sender: ProgressSender,
  ): Promise<TaskOutcome<T>> {
    const { progress, signal } = control;
    const end = (phase: TaskPhase, message: string) => {
      progress.phase = phase;
      progress.message = message;
      sender.send(true);
    };
    try {
      const value = await definition.work(control);
      definition.settle?.(progress, value);
      if (signal.aborted) {
        end('cancelled', definition.cancelledMessage ?? 'cancelled');
        return { status: 'cancelled', value };
      }
      end('finished', progress.message);
      return { status: 'finished', value };
    } catch (error) {
      if (signal.aborted || error instanceof Cancelled) {
        end('cancelled', definition.cancelledMessage ?? 'cancelled');
        return { status: 'cancelled', value: null };
      }
      progress.error = toErrorShape(error);
      end('failed', progress.error.message);
      return { status: 'failed', error };
    }
  }

  cancel(jobId: string): void {
    this.tasks.get(jobId)?.controller.abort();
  }

  get size(): number {
    return this.tasks.size;
  }

  /** The last tasks that ended, then the running ones, each oldest first. */
  list(): TaskListItem[] {
    const running = [...this.tasks.values()].map((task) => listItem(task.progress, task.startedAt, null));
    return [...this.ended, ...running];
  }

  /** Cancels every task and waits for each to end. */
  async dispose(): Promise<void> {
    for (const task of this.tasks.values()) task.controller.abort();
    await Promise.allSettled([...this.tasks.values()].map((task) => task.outcome));
  }
}

/** Sends a task's progress as a snapshot, no more often than its interval unless told now. */
class ProgressSender {
  private lastSentAt = -Infinity;

  constructor(
    private readonly events: EventSink,
    private readonly progress: TaskProgress,
    private readonly intervalMs: number,
  ) {}

  send(now: boolean): boolean {
    const at = performance.now();
    if (!now && at - this.lastSentAt < this.intervalMs) return false;
    this.lastSentAt = at;
    // A copy: the work goes on changing its progress after this event has left.
    const { detail } = this.progress;
    this.events.emit('task.progress', { ...this.progress, detail: detail && { ...detail } } as TaskProgress);
    return true;
  }
}

/**
 * For in-process callers (the CLI): the value, with the task cancelled when `signal` aborts.
 * A cancelled task that returned nothing unwinds the caller with `Cancelled`; a failed one
 * rethrows its error.
 */
export async function awaitTask<T>(task: LaunchedTask<T>, runner: TaskRunner, signal?: AbortSignal): Promise<T> {
  const stop = () => runner.cancel(task.jobId);
  if (signal?.aborted) stop();
  signal?.addEventListener('abort', stop, { once: true });
  try {
    const outcome = await task.outcome;
    if (outcome.status === 'failed') throw outcome.error;
    if (outcome.status === 'cancelled' && outcome.value === null) throw new Cancelled();
    return outcome.value as T;
  } finally {
    signal?.removeEventListener('abort', stop);
  }
}

/** What `start` over RPC answers: the task's id, its outcome left to the progress events. */
export function startedTask(task: LaunchedTask<unknown>): { jobId: string } {
  return { jobId: task.jobId };
}

/**
 * The two ways callers reach a service's task: started over RPC, awaited in process. Cancel is
 * the tasks service's, one method for every kind.
 */
export function taskMethods<Spec, Hooks extends { signal?: AbortSignal }, Outcome>(
  runner: TaskRunner,
  launch: (spec: Spec, hooks?: Hooks) => Promise<LaunchedTask<Outcome>>,
) {
  return {
    start: async (spec: Spec) => startedTask(await launch(spec)),
    run: async (spec: Spec, hooks?: Hooks) => awaitTask(await launch(spec, hooks), runner, hooks?.signal),
  };
}

/** A step of a quantization, pull or setup: its line and its counters. */
export type ToolStep = Pick<ToolTaskProgress, 'message' | 'done' | 'total'>;

/**
 * A quantization, pull or setup: `work` gets the task's signal and a reporter for its steps, each
 * sent at once. A finished task ends on its last step's line (what setup found or built).
 */
export function launchToolTask<T>(
  runner: TaskRunner,
  kind: ToolTaskProgress['kind'],
  work: (signal: AbortSignal, report: (step: ToolStep) => void) => Promise<T>,
  onEnd?: () => void,
): LaunchedTask<T> {
  return runner.launch<ToolTaskProgress, T>({
    kind,
    detail: null,
    work: (task) =>
      work(task.signal, (step) => {
        Object.assign(task.progress, step);
        task.running();
      }),
    onEnd,
  });
}
