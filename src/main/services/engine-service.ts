import type { EngineService, EngineSetupOptions } from '../../shared/contract';
import type { BuildProgress } from '../engines/llamacpp/engine-build';
import type { SetupResult } from '../setup/setup';
import { awaitTask, launchToolTask, startedTask, type LaunchedTask, type TaskRunner } from './tasks';

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
}

/**
 * Engine setup as a task: progress as `task.progress` events (kind `setup`: the build's steps and
 * compile percent) on the composition root's one runner, cancelled through `tasks.cancel`, and
 * `onEngineChanged` told when it ends so the next server start locates the engine again.
 */
export function createEngineService(tasks: TaskRunner, onEngineChanged: () => void): LocalEngineService {
  async function launch(options: EngineSetupOptions, hooks: SetupHooks = {}): Promise<LaunchedTask<SetupResult>> {
    const { runSetup } = await import('../setup/setup');
    return launchToolTask(
      tasks,
      'setup',
      (signal, report) => {
        let step = '';
        const progress: BuildProgress = {
          step(index, total, label) {
            step = `[${index}/${total}] ${label}`;
            hooks.progress?.step(index, total, label);
            report({ message: step, done: index - 1, total });
          },
          percent(value) {
            hooks.progress?.percent(value);
            report({ message: `${step}: ${value} %`, done: value, total: 100 });
          },
          info(line) {
            hooks.progress?.info(line);
            report({ message: line, done: 0, total: null });
          },
        };
        const log = (line: string) => {
          hooks.log?.(line);
          report({ message: line, done: 0, total: null });
        };
        return runSetup({ backend: options.backend, force: options.force, fromSource: options.fromSource, progress, log, signal });
      },
      onEngineChanged,
    );
  }

  return {
    setup: async (options) => startedTask(await launch(options ?? {})),
    setupAndWait: async (options, hooks = {}) => awaitTask(await launch(options, hooks), tasks, hooks.signal),
  };
}
