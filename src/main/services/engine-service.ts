import type { EngineService, EngineSetupOptions, EventSink } from '../../shared/contract';
import type { BuildProgress } from '../engines/llamacpp/engine-build';
import type { SetupResult } from '../setup/setup';
import { awaitJob, detach, JobTable, launchProgressJob, type LaunchedJob } from './jobs';

export type { BuildProgress, SetupResult };

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
    return launchProgressJob(
      jobs,
      events,
      'setup',
      (signal, report) => {
        let step = '';
        const progress: BuildProgress = {
          step(index, total, label) {
            step = `[${index}/${total}] ${label}`;
            hooks.progress?.step(index, total, label);
            report({ label: step, done: index - 1, total });
          },
          percent(value) {
            hooks.progress?.percent(value);
            report({ label: `${step}: ${value} %`, done: value, total: 100 });
          },
          info(line) {
            hooks.progress?.info(line);
            report({ label: line, done: 0, total: null });
          },
        };
        const log = (line: string) => {
          hooks.log?.(line);
          report({ label: line, done: 0, total: null });
        };
        return runSetup({ backend: options.backend, force: options.force, fromSource: options.fromSource, progress, log, signal });
      },
      onEngineChanged,
    );
  }

  return {
    setup: async (options) => detach(await launch(options ?? {})),
    setupAndWait: async (options, hooks = {}) => awaitJob(await launch(options, hooks), (jobId) => jobs.cancel(jobId), hooks.signal),
    cancel: async (jobId) => jobs.cancel(jobId),
    dispose: () => jobs.cancelAll(),
  };
}
