import type { RunTaskDetail, RunTaskProgress, TaskPhase, TaskProgress } from './contract';

export function taskIsOver(phase: TaskPhase): boolean {
  return phase === 'finished' || phase === 'failed' || phase === 'cancelled';
}

/** A task as it starts, before its work has reported: what the UI shows until its first event. */
export function startingTask<P extends TaskProgress>(jobId: string, kind: P['kind'], detail: P['detail'], total: number | null = null): P {
  return { jobId, kind, phase: 'starting', message: 'starting', done: 0, total, error: null, detail } as P;
}

/** A run task as it starts, before anything is sent: what the service emits first and the UI shows first. */
export function startingRunTask(jobId: string, total: number | null): RunTaskProgress {
  return startingTask<RunTaskProgress>(jobId, 'run', startingRunDetail(), total);
}

export function startingRunDetail(): RunTaskDetail {
  return { runId: null, sent: 0, failed: 0, ttftPoints: [], outputTokensPerS: null, sampleText: '', summary: null };
}
