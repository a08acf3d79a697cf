import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import type { ClientLoad } from '../../shared/contract/runs';

/** How finely the event-loop delay is sampled: finer than a GPU's inter-token gap, coarse enough to cost nothing. */
const DELAY_RESOLUTION_MS = 5;

/**
 * The client's own load over the measured window. Every chunk's arrival time is taken on this
 * process's event loop, so a loop that is busy or late stamps tokens late: the latencies then
 * measure the client as much as the server.
 *
 * - loop_utilization: the share of the window the main thread's loop was running JavaScript
 *   (Node's event-loop utilization), not waiting for I/O;
 * - loop_delay_ms_p99 / max: how late a timer on the loop fired, sampled every 5 ms;
 * - cpu_cores: the whole process's CPU time (worker threads included) over wall time.
 */
export function watchClientLoad(): { stop(): ClientLoad } {
  const delay = monitorEventLoopDelay({ resolution: DELAY_RESOLUTION_MS });
  const utilizationAtStart = performance.eventLoopUtilization();
  const cpuAtStart = process.cpuUsage();
  const wallAtStart = performance.now();
  delay.enable();
  let result: ClientLoad | null = null;
  return {
    stop() {
      if (result) return result;
      delay.disable();
      const wallMs = performance.now() - wallAtStart;
      const cpu = process.cpuUsage(cpuAtStart);
      const samples = delay.count;
      result = {
        loop_utilization: performance.eventLoopUtilization(utilizationAtStart).utilization,
        // The histogram counts the interval itself in each sample: what is beyond it is the delay.
        loop_delay_ms_p99: samples === 0 ? null : Math.max(0, delay.percentile(99) / 1e6 - DELAY_RESOLUTION_MS),
        loop_delay_ms_max: samples === 0 ? null : Math.max(0, delay.max / 1e6 - DELAY_RESOLUTION_MS),
        cpu_cores: wallMs > 0 ? (cpu.user + cpu.system) / 1000 / wallMs : 0,
        window_ms: wallMs,
      };
      return result;
    },
  };
}

/** A watch started when the measured window opens (after warmup and ramp); stop() is null if it never opened. */
export function measuredWindowClientLoad(): { start(): void; stop(): ClientLoad | null } {
  let watch: { stop(): ClientLoad } | null = null;
  return {
    start() {
      watch ??= watchClientLoad();
    },
    stop: () => watch?.stop() ?? null,
  };
}
