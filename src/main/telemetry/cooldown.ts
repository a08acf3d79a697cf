import type { GpuSample } from '../../shared/contract/telemetry';
import { runToCompletion } from '../core/process';
import { nvidiaSmiPath } from './gpu-sampler';
import { gpuQueryOnceArgs, INVALID_QUERY_FIELD, parseGpuLine } from './nvidia-smi-parse';
import type { CooldownWait } from '../../shared/contract/experiments';

/** What a GPU is like at rest: where it must come back to before the next window. */
export interface IdleState {
  index: number;
  temperatureC: number | null;
  smClockMhz: number | null;
  memClockMhz: number | null;
}

export interface CooldownOptions {
  /** One reading of every GPU; null when there is no GPU to read. */
  readGpus: () => Promise<GpuSample[] | null>;
  baseline: readonly IdleState[];
  timeoutMs: number;
  pollMs?: number;
  /** Degrees above the idle temperature still counted as cool. */
  temperatureMarginC?: number;
  /** Share above the idle clocks still counted as idle (clocks step down in bins). */
  clockMargin?: number;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

export type CooldownResult = CooldownWait;

export function idleStateOf(samples: readonly GpuSample[]): IdleState[] {
  return samples.map((sample) => ({
    index: sample.index,
    temperatureC: sample.temperatureC,
    smClockMhz: sample.smClockMhz,
    memClockMhz: sample.memClockMhz ?? null,
  }));
}

/** The first figure of a reading still above its baseline (plus margin), or null when all are back. */
function stillWarm(reading: GpuSample, idle: IdleState, marginC: number, clockMargin: number): string | null {
  if (reading.temperatureC !== null && idle.temperatureC !== null && reading.temperatureC > idle.temperatureC + marginC)
    return `GPU ${reading.index} at ${reading.temperatureC} °C (idle ${idle.temperatureC} °C)`;
  if (reading.smClockMhz !== null && idle.smClockMhz !== null && reading.smClockMhz > idle.smClockMhz * (1 + clockMargin))
    return `GPU ${reading.index} SM clock ${reading.smClockMhz} MHz (idle ${idle.smClockMhz} MHz)`;
  const mem = reading.memClockMhz ?? null;
  if (mem !== null && idle.memClockMhz !== null && mem > idle.memClockMhz * (1 + clockMargin))
    return `GPU ${reading.index} memory clock ${mem} MHz (idle ${idle.memClockMhz} MHz)`;
  return null;
}

/**
 * Waits between an experiment's windows until every GPU is back at its idle temperature
 * and clocks, so that one condition does not start on a GPU the previous one heated
 * (and a thermal slowdown it caused). Gives up at the timeout and says what was still warm.
 */
export async function coolDown(options: CooldownOptions): Promise<CooldownResult> {
  const now = options.now ?? (() => performance.now());
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const begun = now();
  if (options.baseline.length === 0) return { reached: null, waited_ms: 0, reason: 'no GPU idle baseline: nothing to cool down' };
  let warm: string | null = 'no GPU reading';
  for (;;) {
    const readings = await options.readGpus();
    if (readings === null) return { reached: null, waited_ms: now() - begun, reason: 'the GPU could not be read' };
    warm = null;
    for (const idle of options.baseline) {
      const reading = readings.find((sample) => sample.index === idle.index);
      warm = reading ? stillWarm(reading, idle, options.temperatureMarginC ?? 3, options.clockMargin ?? 0.1) : null;
      if (warm) break;
    }
    if (!warm) return { reached: true, waited_ms: now() - begun, reason: null };
    if (now() - begun >= options.timeoutMs) break;
    await sleep(Math.min(options.pollMs ?? 1000, Math.max(0, options.timeoutMs - (now() - begun))));
  }
  return { reached: false, waited_ms: now() - begun, reason: `timed out: ${warm}` };
}

/** Every GPU read once with the sampler's own query (without the clock fields where the driver refuses them); null without nvidia-smi or when it fails. */
export async function readGpusOnce(binary: string | null = nvidiaSmiPath(), timeoutMs = 5000): Promise<GpuSample[] | null> {
  if (!binary) return null;
  for (const withClocks of [true, false]) {
    const run = await runToCompletion(binary, gpuQueryOnceArgs(withClocks), { timeoutMs }).catch(() => null);
    if (!run) return null;
    if (run.code !== 0 && withClocks && INVALID_QUERY_FIELD.test(run.output)) continue;
    if (run.code !== 0) return null;
    const samples = run.output.split('\n').flatMap((line) => parseGpuLine(line, 0) ?? []);
    return samples.length > 0 ? samples : null;
  }
  return null;
}

/**
 * The cooldown an experiment asked for, on this machine: a no-op with the reason where
 * there is no GPU (CPU temperature and clocks are not tracked), else wait for the baseline.
 */
export async function coolDownBetweenWindows(
  baseline: readonly IdleState[] | null,
  timeoutMs: number,
  binary: string | null = nvidiaSmiPath(),
): Promise<CooldownResult> {
  if (!binary)
    return {
      reached: null,
      waited_ms: 0,
      reason: 'no GPU (nvidia-smi not found): CPU temperature and clocks are not tracked, no cooldown',
    };
  return coolDown({ readGpus: () => readGpusOnce(binary), baseline: baseline ?? [], timeoutMs });
}
