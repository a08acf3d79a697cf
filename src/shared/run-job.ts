import type { RunJobState } from './contract';

/** A run job as it starts, before anything is sent: what the service emits first and the UI shows first. */
export function startingRunJob(jobId: string): RunJobState {
  return {
    jobId,
    phase: 'starting',
    runId: null,
    message: 'starting',
    sent: 0,
    finished: 0,
    failed: 0,
    ttftPoints: [],
    outputTokensPerS: null,
    sampleText: '',
    summary: null,
    error: null,
  };
}
