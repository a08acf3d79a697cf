import crypto from 'node:crypto';
import type { EventSink, JobProgress } from '../../shared/contract';
import { toErrorShape } from '../core/errors';

function newJobId(): string {
  return crypto.randomUUID();
}

/** The jobs a service has running: registered before their work starts, cancellable, awaited on shutdown. */
export class JobTable {
  private readonly jobs = new Map<string, { controller: AbortController; done: Promise<void> }>();

  /** A new job's id and controller, registered at once so a cancel that arrives immediately is not lost. */
  open(): { jobId: string; controller: AbortController } {
    const jobId = newJobId();
    const controller = new AbortController();
    this.jobs.set(jobId, { controller, done: Promise.resolve() });
    return { jobId, controller };
  }

  /** The job's outcome, for shutdown to wait on; it must call `close` when it ends. */
  track(jobId: string, outcome: Promise<unknown>): void {
    const job = this.jobs.get(jobId);
    if (job)
      job.done = outcome.then(
        () => undefined,
        () => undefined,
      );
  }

  close(jobId: string): void {
    this.jobs.delete(jobId);
  }

  cancel(jobId: string): void {
    this.jobs.get(jobId)?.controller.abort();
  }

  get size(): number {
    return this.jobs.size;
  }

  /** Cancels every job and waits for each to end. */
  async cancelAll(): Promise<void> {
    for (const job of this.jobs.values()) job.controller.abort();
    await Promise.allSettled([...this.jobs.values()].map((job) => job.done));
  }
}

/** A long operation as the services start it: its id, and its outcome. */
export interface LaunchedJob<T> {
  jobId: string;
  done: Promise<T>;
}

/** For `start` over RPC: the outcome travels as progress events, so nobody awaits it here. */
export function detach<T>(job: LaunchedJob<T>): { jobId: string } {
  job.done.catch(() => undefined);
  return { jobId: job.jobId };
}

/** For in-process callers: the outcome, with the job cancelled when `signal` aborts. */
export async function awaitJob<T>(job: LaunchedJob<T>, cancel: (jobId: string) => void, signal?: AbortSignal): Promise<T> {
  const stop = () => cancel(job.jobId);
  if (signal?.aborted) stop();
  signal?.addEventListener('abort', stop, { once: true });
  try {
    return await job.done;
  } finally {
    signal?.removeEventListener('abort', stop);
  }
}

/** The three ways callers reach a service's long operation: started over RPC, awaited in-process, cancelled. */
export function jobMethods<Spec, Hooks extends { signal?: AbortSignal }, Outcome>(
  jobs: JobTable,
  launch: (spec: Spec, hooks?: Hooks) => Promise<LaunchedJob<Outcome>>,
) {
  return {
    start: async (spec: Spec) => detach(await launch(spec)),
    run: async (spec: Spec, hooks?: Hooks) => awaitJob(await launch(spec, hooks), (jobId) => jobs.cancel(jobId), hooks?.signal),
    cancel: async (jobId: string) => jobs.cancel(jobId),
  };
}

/** A progress step of a job: what `job.progress` carries before the end. */
export type JobStep = Pick<JobProgress, 'label' | 'done' | 'total'>;

/**
 * A job whose progress travels as `job.progress` events: registered, run, its end announced
 * (finished, cancelled or failed with its error) and closed. `work` gets the job's signal and
 * a reporter for its steps.
 */
export function launchProgressJob<T>(
  jobs: JobTable,
  events: EventSink,
  kind: JobProgress['kind'],
  work: (signal: AbortSignal, report: (step: JobStep) => void) => Promise<T>,
  onEnd: () => void = () => undefined,
): LaunchedJob<T> {
  const { jobId, controller } = jobs.open();
  const emit = (progress: Omit<JobProgress, 'jobId' | 'kind'>) => events.emit('job.progress', { jobId, kind, ...progress });
  const done = (async () => {
    try {
      const result = await work(controller.signal, (step) => emit({ ...step, finished: false, error: null }));
      emit({ label: 'done', done: 1, total: 1, finished: true, error: null });
      return result;
    } catch (error) {
      const cancelled = controller.signal.aborted;
      emit({
        label: cancelled ? 'cancelled' : 'failed',
        done: 0,
        total: null,
        finished: true,
        error: cancelled ? null : toErrorShape(error),
      });
      throw error;
    } finally {
      onEnd();
      jobs.close(jobId);
    }
  })();
  jobs.track(jobId, done);
  return { jobId, done };
}
