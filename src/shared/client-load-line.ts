import type { ClientLoad } from './contract/runs';

/** The client's own load in one line, for the CLI summary and the Run view. */
export function clientLoadLine(load: ClientLoad): string {
  const delay =
    load.loop_delay_ms_p99 === null
      ? 'timer delay not sampled'
      : `timers late ${load.loop_delay_ms_p99.toFixed(1)} ms at p99 (max ${(load.loop_delay_ms_max ?? 0).toFixed(1)} ms)`;
  return `client: event loop busy ${(load.loop_utilization * 100).toFixed(0)} % of the window, ${delay}, ${load.cpu_cores.toFixed(2)} cores of CPU`;
}

/** Each stream shard's loop and slip in one line, or null when the run's own loop sent every request. */
export function shardsLine(load: ClientLoad): string | null {
  if (!load.shards || load.shards.length === 0) return null;
  const ms = (value: number | null) => (value === null ? '—' : `${value.toFixed(1)} ms`);
  const each = load.shards.map(
    (shard) =>
      `#${shard.shard} ${shard.requests} requests, busy ${(shard.loop_utilization * 100).toFixed(0)} %, timers late ${ms(shard.loop_delay_ms_p99)} at p99, slip p99 ${ms(shard.slip_ms_p99)}`,
  );
  return `stream shards: ${each.join('; ')}`;
}
