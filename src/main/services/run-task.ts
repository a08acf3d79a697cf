import type { RunTaskProgress, StartRunSpec } from '../../shared/contract';
import { applySettings } from '../engines/llamacpp/profile-rules';
import type { RunProgress } from '../runner/run-executor';
import type { RunTargetSpec } from '../runner/run-target';
import { slotsForUsers } from '../runner/conversation-slots';
import { profileWithin } from './access';
import type { CheckedRun } from './run-spec';
import type { WorkloadDef } from '../workload/workload-types';
import { AppError } from '../core/errors';
import { ErrorCode } from '../../shared/errors';
import type { WorkServiceDeps } from './service-deps';
import type { TaskControl } from './tasks';
import { loraAdapterEntries } from '../../shared/lora-adapter-entry';
import type { ServerProfile } from '../../shared/contract/server';
import { isDemoRef } from '../models/demo-models';
import { assertImagesServed, showsImages } from '../workload/item-images';

/** What a caller awaiting a run (the CLI) hears while it goes. */
export interface RunHooks {
  onStatus?: (line: string) => void;
  /** The run is stored and about to send its first request. */
  onRunCreated?: (runId: string) => void;
  onProgress?: (progress: RunProgress) => void;
  signal?: AbortSignal;
  /** Awaited after the warmup, before the first measured request: where the lanes of a race run together meet. */
  atStartLine?: () => Promise<void>;
}

/**
 * Refuses, before a server starts, a workload item whose per-request `lora` names an adapter the
 * managed server will not load: the pinned llama-server ignores such an id, so the request would
 * quietly run without the adapter it asked for.
 */
export function assertLoraChoicesFit(def: WorkloadDef, adaptersLoaded: number): void {
  for (const group of def.groups)
    for (const item of group.items ?? [])
      for (const choice of item.lora ?? [])
        if (choice.id >= adaptersLoaded)
          throw new AppError(
            ErrorCode.InvalidInput,
            `workload item "${item.id}": lora names adapter ${choice.id}, but the server loads ${
              adaptersLoaded === 0
                ? "none: set the profile's loraAdapter (--set loraAdapter=FILE, or demo:lora)"
                : `${adaptersLoaded} (ids 0 to ${adaptersLoaded - 1}, in the order of the profile's loraAdapter list)`
            }`,
          );
}

/** The projector the demo models take where a workload shows images and the profile names none: the demo's own. */
const DEMO_PROJECTOR = 'demo:mmproj';

/**
 * A demo model serving a workload with images and no projector named gets the demo projector, and
 * the run says so: the built-in vision workload then runs on the demo models as the other built-ins
 * do. Any other model's projector is its own file, which only the person can name.
 */
export function withDemoProjector(
  profile: ServerProfile,
  modelRef: string,
  def: WorkloadDef,
  onStatus?: (line: string) => void,
): ServerProfile {
  if (profile.projector || !isDemoRef(modelRef) || !showsImages(def)) return profile;
  onStatus?.(
    `the workload shows images: ${modelRef} is served with the demo projector (${DEMO_PROJECTOR}; --set projector=FILE for another)`,
  );
  return { ...profile, projector: DEMO_PROJECTOR };
}

/** Where a checked run goes: a managed server on the profile with the run's settings (slots enough for its users), or an endpoint. */
export async function runTargetOf(spec: StartRunSpec, checked: CheckedRun, deps: WorkServiceDeps, hooks: RunHooks): Promise<RunTargetSpec> {
  if (checked.target.kind !== 'model') return checked.target;
  const profile = await profileWithin(
    deps.access,
    withDemoProjector(
      applySettings(deps.store.profiles.get(spec.profileName || 'default'), spec.settings ?? []),
      checked.target.modelRef,
      checked.request.workload.def,
      hooks.onStatus,
    ),
  );
  assertLoraChoicesFit(checked.request.workload.def, loraAdapterEntries(profile.loraAdapter ?? '').length);
  assertImagesServed(checked.request.workload.def, profile.projector);
  return {
    ...checked.target,
    profile: slotsForUsers(profile, checked.request, spec.settings ?? [], hooks.onStatus),
    force: Boolean(spec.force),
  };
}

/**
 * The runner's callbacks that keep a run task's progress current: the phase, counters, the
 * newest TTFT points and one streamed answer as a sample. The task sends them at most every
 * 200 ms (at once for a change of phase or a status line).
 */
export function runTaskCallbacks(task: TaskControl<RunTaskProgress>, hooks: RunHooks) {
  const { progress } = task;
  const { detail } = progress;
  let sampleSeq: number | null = null;
  let finishedAtSample = 0;
  const send = (now = false) => {
    // The points travel once: each event carries those since the one before.
    if (task.send(now)) detail.ttftPoints = [];
  };
  return {
    onStatus: (message: string) => {
      progress.message = message;
      hooks.onStatus?.(message);
      send(true);
    },
    onRunCreated: (runId: string) => {
      hooks.onRunCreated?.(runId);
      detail.runId = runId;
      task.running();
    },
    onProgress: (update: RunProgress) => {
      detail.sent = update.sent;
      if (update.finished > progress.done && update.lastTtftMs !== null && update.lastSentAtMs !== null && !update.warmup)
        detail.ttftPoints.push([update.lastSentAtMs, update.lastTtftMs]);
      progress.done = update.finished;
      detail.failed = update.failed;
      // A new finished request: the sample follows the next answer that streams.
      if (update.finished > finishedAtSample) {
        finishedAtSample = update.finished;
        sampleSeq = null;
      }
      hooks.onProgress?.(update);
      send();
    },
    onText: (seq: number, text: string) => {
      if (sampleSeq === null) {
        sampleSeq = seq;
        detail.sampleText = '';
      }
      if (seq === sampleSeq) detail.sampleText = (detail.sampleText + text).slice(-4000);
    },
  };
}
