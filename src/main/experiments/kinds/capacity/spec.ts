import type { CapacitySpec } from '../../../../shared/contract/experiment-kinds/capacity';
import { SLO_METRICS, sloFlagName } from '../../../../shared/contract/runs';
import type { WorkloadDef } from '../../../workload/workload-types';
import { hasConversations } from '../../../runner/conversation-slots';
import { invalidSpec } from '../../spec-checks';

/** Users are conversations: a capacity in users runs the built-in conversations unless told otherwise. */
export const USERS_WORKLOAD = 'multi-turn-chat';

export function checkCapacityShape(spec: CapacitySpec): void {
  const capacity = spec.capacity;
  if (!capacity || typeof capacity !== 'object')
    invalidSpec('a capacity experiment needs capacity: { by, percentile, start, maxLoad, keepCache }');
  if (capacity.by !== 'rate' && capacity.by !== 'concurrency' && capacity.by !== 'users')
    invalidSpec(`capacity.by must be rate, concurrency or users, got ${JSON.stringify(capacity.by)}`);
  if (typeof capacity.percentile !== 'number' || !(capacity.percentile >= 50 && capacity.percentile <= 99.9))
    invalidSpec(`the percentile must be from 50 to 99.9, got ${JSON.stringify(capacity.percentile)}`);
  const slo = spec.constraints?.slo;
  if (!slo || SLO_METRICS.every((metric) => slo[metric] === undefined))
    invalidSpec(`a capacity experiment needs an SLO: --slo ttft=MS,tpot=MS (any of ${SLO_METRICS.map(sloFlagName).join(', ')})`);
  const minimum = capacity.by === 'rate' ? 0.05 : 1;
  for (const [name, value] of [
    ['start', capacity.start],
    ['maxLoad', capacity.maxLoad],
  ] as const) {
    if (value === null || value === undefined) continue;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < minimum || (capacity.by !== 'rate' && !Number.isInteger(value)))
      invalidSpec(
        `capacity.${name} must be ${capacity.by === 'rate' ? 'a rate of at least 0.05 req/s' : 'a whole number of at least 1'}, got ${JSON.stringify(value)}`,
      );
  }
  if (capacity.start != null && capacity.maxLoad != null && capacity.start > capacity.maxLoad)
    invalidSpec(`capacity.start (${capacity.start}) is above capacity.maxLoad (${capacity.maxLoad})`);
}

/** The workload a capacity search runs when the spec names none: conversations for users. */
export const capacityDefaultWorkload = (spec: CapacitySpec, fallback: string): string =>
  spec.capacity?.by === 'users' ? USERS_WORKLOAD : fallback;

/** A capacity in users needs conversations to hold its users. */
export function checkCapacityWorkload(spec: CapacitySpec, workload: WorkloadDef): void {
  if (spec.capacity?.by === 'users' && !hasConversations(workload))
    invalidSpec(
      `a capacity in users needs a conversation workload (items with "turns", or the conversations generator, as in ${USERS_WORKLOAD}); ${workload.name} has none: use --by concurrency`,
    );
}
