import type { EngineService, EngineSetupOptions, EventSink, JobProgress } from '../../shared/contract';
import { toErrorShape } from '../core/errors';
import type { BuildProgress } from '../engines/llamacpp/engine-build';
import type { SetupResult } from '../setup/setup';
import { awaitJob, detach, JobTable, type LaunchedJob } from './jobs';

/** What a caller awaiting a setup (the CLI) hears while it goes. */
export interface SetupHooks {
  progress?: BuildProgress;
  log?: (line: string) => void;
  signal?: AbortSignal;
}

/** The engine service plus the awaitable form in-process callers get. */
export interface LocalEngineService extends EngineService {
  setupAndWait(options: EngineSetupOptions, hooks?: SetupHooks): Promise<SetupResult>;
  dispose(): Promise<void>;
}

/**
 * Engine setup as a job: progress as `job.progress` events (kind `setup`: the build's steps and
 * compile percent), cancellable, and `onEngineChanged` told when it ends so the next server
 * start locates the engine again.
 */
export function createEngineService(events: EventSink, onEngineChanged: () => void): LocalEngineService {
  const jobs = new JobTable();

  async function launch(options: EngineSetupOptions, hooks: SetupHooks = {}): Promise<LaunchedJob<SetupResult>> {
    const { runSetup } = await import('../setup/setup');
    const { jobId, controller } = jobs.open();
    const emit = (progress: Omit<JobProgress, 'jobId' | 'kind'>) => events.emit('job.progress', { jobId, kind: 'setup', ...progress });
    let step = '';
    const progress: BuildProgress = {
      step(index, total, label) {
        step = `[${index}/${total}] ${label}`;
        hooks.progress?.step(index, total, label);
        emit({ label: step, done: index - 1, total, finished: false, error: null });
      },
      percent(value) {
        hooks.progress?.percent(value);
        emit({ label: `${step}: ${value} %`, done: value, total: 100, finished: false, error: null });
      },
      info(line) {
        hooks.progress?.info(line);
        emit({ label: line, done: 0, total: null, finished: false, error: null });
      },
    };
    const done = (async () => {
      try {
        const result = await runSetup({
          backend: options.backend,
          force: options.force,
          progress,
          log: (line) => {
            hooks.log?.(line);
            emit({ label: line, done: 0, total: null, finished: false, error: null });
          },
          signal: controller.signal,
        });
        emit({ label: 'engine ready', done: 1, total: 1, finished: true, error: null });
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
        onEngineChanged();
        jobs.close(jobId);
      }
    })();
    jobs.track(jobId, done);
    return { jobId, done };
  }

  return {
    setup: async (options) => detach(await launch(options ?? {})),
    setupAndWait: async (options, hooks = {}) => awaitJob(await launch(options, hooks), (jobId) => jobs.cancel(jobId), hooks.signal),
    cancel: async (jobId) => jobs.cancel(jobId),
    dispose: () => jobs.cancelAll(),
  };
}
