import type { Emitter } from '../../src/main/core/emitter';
import type { AppEvent } from '../../src/main/services';
import type { ExperimentTaskProgress, RunTaskProgress, TaskKind, TaskProgress, ToolTaskProgress } from '../../src/shared/contract';
import { taskIsOver } from '../../src/shared/tasks';

type ProgressOf<K extends TaskKind> = K extends 'run'
  ? RunTaskProgress
  : K extends 'experiment'
    ? ExperimentTaskProgress
    : ToolTaskProgress;

/**
 * The end of the next task of `kind` (of `jobId`, when given) on the services' events, with
 * `onProgress` told of each of its reports on the way, the last one included.
 */
export function taskEnd<K extends TaskKind>(
  events: Emitter<AppEvent>,
  kind: K,
  options: { jobId?: () => string | null; onProgress?: (progress: ProgressOf<K>) => void } = {},
): Promise<ProgressOf<K>> {
  return new Promise((resolve) => {
    const stop = events.on((event) => {
      if (event.name !== 'task.progress') return;
      const progress = event.payload as TaskProgress;
      const jobId = options.jobId?.();
      if (progress.kind !== kind || (jobId && progress.jobId !== jobId)) return;
      options.onProgress?.(progress as ProgressOf<K>);
      if (!taskIsOver(progress.phase)) return;
      stop();
      resolve(progress as ProgressOf<K>);
    });
  });
}
