import type { ClientLoad } from './contract/runs';

/** The client's own load in one line, for the CLI summary and the Run view. */
export function clientLoadLine(load: ClientLoad): string {
  const delay =
    load.loop_delay_ms_p99 === null
      ? 'timer delay not sampled'
      : `timers late ${load.loop_delay_ms_p99.toFixed(1)} ms at p99 (max ${(load.loop_delay_ms_max ?? 0).toFixed(1)} ms)`;
  return `client: event loop busy ${(load.loop_utilization * 100).toFixed(0)} % of the window, ${delay}, ${load.cpu_cores.toFixed(2)} cores of CPU`;
}
