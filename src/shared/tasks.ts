import type { RunTaskDetail, RunTaskProgress, TaskPhase } from './contract';

export function taskIsOver(phase: TaskPhase): boolean {
  return phase === 'finished' || phase === 'failed' || phase === 'cancelled';
}

/** A run task as it starts, before anything is sent: what the service emits first and the UI shows first. */
export function startingRunTask(jobId: string, total: number | null): RunTaskProgress {
  return {
    jobId,
    kind: 'run',
    phase: 'starting',
    message: 'starting',
    done: 0,
    total,
    error: null,
    detail: startingRunDetail(),
  };
}

export function startingRunDetail(): RunTaskDetail {
  return { runId: null, sent: 0, failed: 0, ttftPoints: [], outputTokensPerS: null, sampleText: '', summary: null };
}
