import type { ClientLoad, ShardLoad } from '../../shared/contract/runs';

/**
 * A loop busy this share of the window has no slack left: streams wait in the socket for it, so
 * chunk times (and everything built on them) include the client's queue.
 */
export const SATURATED_LOOP_UTILIZATION = 0.9;
/** A p99 timer delay this long shifts token times by more than a GPU's usual inter-token gap several times over. */
export const STALLED_LOOP_DELAY_MS = 50;

/** Why the client's own load makes the run's latencies suspect, or null when it had room to spare. */
export function clientBehindReason(load: ClientLoad): string | null {
  const remedy =
    'latencies include time the client spent catching up; lower the concurrency or rate, or run the client on a machine with a free core';
  if (load.loop_utilization >= SATURATED_LOOP_UTILIZATION)
    return `the client was saturated: its event loop was busy ${(load.loop_utilization * 100).toFixed(0)} % of the window (${load.cpu_cores.toFixed(2)} cores of CPU): ${remedy}`;
  if (load.loop_delay_ms_p99 !== null && load.loop_delay_ms_p99 >= STALLED_LOOP_DELAY_MS)
    return `the client stalled: its event loop ran timers ${load.loop_delay_ms_p99.toFixed(0)} ms late at p99 (max ${(load.loop_delay_ms_max ?? 0).toFixed(0)} ms), so chunks were stamped late: ${remedy}`;
  return load.shards?.map(shardBehindReason).find((reason) => reason !== null) ?? null;
}

/** A stream shard stamps its requests' chunks on its own loop: one saturated or stalled shard makes those latencies suspect. */
function shardBehindReason(shard: ShardLoad): string | null {
  const remedy =
    "its requests' latencies include time it spent catching up; lower the rate, or give the run more shards on a machine with free cores";
  if (shard.loop_utilization >= SATURATED_LOOP_UTILIZATION)
    return `stream shard ${shard.shard} was saturated: its event loop was busy ${(shard.loop_utilization * 100).toFixed(0)} % of the window: ${remedy}`;
  if (shard.loop_delay_ms_p99 !== null && shard.loop_delay_ms_p99 >= STALLED_LOOP_DELAY_MS)
    return `stream shard ${shard.shard} stalled: its event loop ran timers ${shard.loop_delay_ms_p99.toFixed(0)} ms late at p99 (max ${(shard.loop_delay_ms_max ?? 0).toFixed(0)} ms): ${remedy}`;
  return null;
}
