import type { EventSink, RunJobState, StartRunSpec } from '../../shared/contract';
import { startingRunJob } from '../../shared/run-job';
import { applySettings } from '../engines/llamacpp/profile-rules';
import type { RunProgress } from '../runner/run-executor';
import type { RunTargetSpec } from '../runner/run-target';
import { slotsForUsers } from '../runner/conversation-slots';
import { profileWithin } from './access';
import type { CheckedRun } from './run-spec';
import type { WorkServiceDeps } from './service-deps';

const PROGRESS_INTERVAL_MS = 200;

/** What a caller awaiting a run (the CLI) hears while it goes. */
export interface RunHooks {
  onStatus?: (line: string) => void;
  /** The run is stored and about to send its first request. */
  onRunCreated?: (runId: string) => void;
  onProgress?: (progress: RunProgress) => void;
  signal?: AbortSignal;
}

/** Where a checked run goes: a managed server on the profile with the run's settings (slots enough for its users), or an endpoint. */
export async function runTargetOf(spec: StartRunSpec, checked: CheckedRun, deps: WorkServiceDeps, hooks: RunHooks): Promise<RunTargetSpec> {
  if (checked.target.kind !== 'model') return checked.target;
  const profile = await profileWithin(
    deps.access,
    applySettings(deps.store.profiles.get(spec.profileName || 'default'), spec.settings ?? []),
  );
  return {
    ...checked.target,
    profile: slotsForUsers(profile, checked.request, spec.settings ?? [], hooks.onStatus),
    force: Boolean(spec.force),
  };
}

/**
 * A run job's state as the faces see it, and the runner's callbacks that keep it current: the
 * phase, counters, the newest TTFT points and one streamed answer as a sample, sent as
 * `run.progress` events at most every 200 ms (at once for a change of phase).
 */
export function runJobTracker(jobId: string, events: EventSink, hooks: RunHooks) {
  const state: RunJobState = startingRunJob(jobId);
  let lastEmit = 0;
  let sampleSeq: number | null = null;
  let finishedAtSample = 0;
  const emit = (force = false) => {
    const now = performance.now();
    if (!force && now - lastEmit < PROGRESS_INTERVAL_MS) return;
    lastEmit = now;
    events.emit('run.progress', { ...state, ttftPoints: [...state.ttftPoints] });
    state.ttftPoints = [];
  };
  const callbacks = {
    onStatus: (message: string) => {
      state.message = message;
      hooks.onStatus?.(message);
      emit(true);
    },
    onRunCreated: (runId: string) => {
      hooks.onRunCreated?.(runId);
      state.runId = runId;
      state.phase = 'running';
      emit(true);
    },
    onProgress: (progress: RunProgress) => {
      state.sent = progress.sent;
      if (progress.finished > state.finished && progress.lastTtftMs !== null && progress.lastSentAtMs !== null && !progress.warmup)
        state.ttftPoints.push([progress.lastSentAtMs, progress.lastTtftMs]);
      state.finished = progress.finished;
      state.failed = progress.failed;
      // A new finished request: the sample follows the next answer that streams.
      if (progress.finished > finishedAtSample) {
        finishedAtSample = progress.finished;
        sampleSeq = null;
      }
      hooks.onProgress?.(progress);
      emit();
    },
    onText: (seq: number, text: string) => {
      if (sampleSeq === null) {
        sampleSeq = seq;
        state.sampleText = '';
      }
      if (seq === sampleSeq) state.sampleText = (state.sampleText + text).slice(-4000);
    },
  };
  return { state, emit, callbacks };
}
