import type { ServerProfile } from '../../shared/contract/server';
import type { WorkloadDef } from '../workload/workload-types';
import type { LoadSpec } from './load-generator';

/** Whether a workload holds conversations (items with turns, or the conversations generator). */
export function hasConversations(def: WorkloadDef): boolean {
  return def.groups.some(
    (group) => (group.items ?? []).some((item) => item.turns) || (group.generate && 'conversations' in group.generate),
  );
}

/**
 * Concurrent users of a conversation workload each keep their history in a server slot: with
 * fewer slots than users, a user's next turn finds its slot taken by another conversation and
 * recomputes the history. So a managed server gets a slot per user, unless the run's settings
 * name a slot count themselves (then the summary's slot-wait note says what that costs).
 */
export function slotsForUsers(
  profile: ServerProfile,
  request: { workload: { def: WorkloadDef }; load: LoadSpec },
  settings: readonly string[],
  say?: (line: string) => void,
): ServerProfile {
  if (request.load.mode !== 'closed' || !hasConversations(request.workload.def)) return profile;
  const users = request.load.concurrency;
  if (profile.parallelSlots >= users) return profile;
  if (settings.some((setting) => setting.trim().startsWith('parallelSlots='))) {
    say?.(`${users} concurrent users share ${profile.parallelSlots} server slot(s), as parallelSlots was set: turns will wait for a slot`);
    return profile;
  }
  const widened = profileWithSlots(profile, users);
  say?.(
    `parallel slots ${profile.parallelSlots} → ${users}: one per concurrent user, so each conversation keeps its history cached` +
      (widened.contextSize !== profile.contextSize ? `; context ${profile.contextSize} → ${widened.contextSize}, the same per slot` : ''),
  );
  return widened;
}

/**
 * A profile with `slots` slots and the same context per slot as before: llama-server splits
 * its context among the slots, so more slots in the same context would give each user less
 * room and fail their longer turns, which would read as the server's limit when it is the
 * profile's. A context of 0 (the model's own) is left as it is.
 */
export function profileWithSlots(profile: ServerProfile, slots: number): ServerProfile {
  const perSlot = profile.contextSize > 0 ? Math.floor(profile.contextSize / Math.max(1, profile.parallelSlots)) : 0;
  return { ...profile, parallelSlots: slots, contextSize: perSlot > 0 ? perSlot * slots : profile.contextSize };
}
