import type { EnergySummary, GpuSample, ThrottleSummary } from '../../shared/contract/telemetry';
import { integratePower } from './power-integral';
import { isSlowdown, slowdownReasonNames } from './throttle-reasons';

export interface MeasuredWindow {
  start: number | null;
  end: number | null;
}

const NO_RATIOS = { joules_per_request: null, joules_per_output_token: null, output_tokens_per_joule: null };

function windowMs(window: MeasuredWindow): number | null {
  return window.start !== null && window.end !== null && window.end > window.start ? window.end - window.start : null;
}

export function energyUnavailable(reason: string, window: MeasuredWindow): EnergySummary {
  return { source: null, joules: null, per_gpu: null, window_ms: windowMs(window), covered_ms: null, coverage: null, ...NO_RATIOS, reason };
}

/**
 * GPU energy over the measured window, per GPU and summed over the GPUs the server ran on.
 * The total covers the shortest-covered of those GPUs' spans, since each GPU's integral
 * stands only for its own.
 */
export function gpuWindowEnergy(
  samples: readonly GpuSample[],
  runGpus: ReadonlySet<number>,
  window: MeasuredWindow,
  source: NonNullable<EnergySummary['source']>,
): EnergySummary {
  const span = windowMs(window);
  if (span === null) return energyUnavailable('the measured window did not open and close', window);
  const indexes = [...new Set(samples.map((sample) => sample.index))].sort((a, b) => a - b);
  const perGpu = indexes.map((index) => {
    const own = samples.filter((sample) => sample.index === index);
    const integral = integratePower(own, window.start!, window.end!);
    return { index, name: own[0]?.name ?? null, joules: integral.joules, covered_ms: integral.coveredMs, samples: integral.readings };
  });
  const counted = perGpu.filter((gpu) => runGpus.has(gpu.index));
  const missing = counted.filter((gpu) => gpu.joules === null);
  if (counted.length === 0 || missing.length > 0) {
    const which = missing.map((gpu) => `GPU ${gpu.index}`).join(', ') || 'the run GPUs';
    return {
      ...energyUnavailable(
        `${which}: fewer than two power readings inside the measured window (power.draw not supported, or a window shorter than two sampling intervals)`,
        window,
      ),
      source,
      per_gpu: perGpu,
    };
  }
  const covered = Math.min(...counted.map((gpu) => gpu.covered_ms));
  return {
    source,
    joules: counted.reduce((sum, gpu) => sum + gpu.joules!, 0),
    per_gpu: perGpu,
    window_ms: span,
    covered_ms: covered,
    coverage: covered / span,
    ...NO_RATIOS,
    reason: null,
  };
}

/** CPU package energy read from RAPL at the window's edges (and in between, for counter wraps). */
export function raplWindowEnergy(
  result: { joules: number | null; domains: string[]; reason: string | null },
  window: MeasuredWindow,
): EnergySummary {
  if (result.joules === null) return energyUnavailable(`no GPU power, and RAPL: ${result.reason}`, window);
  const span = windowMs(window);
  return {
    source: 'rapl',
    joules: result.joules,
    per_gpu: null,
    window_ms: span,
    covered_ms: span,
    coverage: span === null ? null : 1,
    rapl_domains: result.domains,
    ...NO_RATIOS,
    reason: null,
  };
}

const mean = (values: number[]) => (values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length);

/** Clock slowdowns over the window's readings (already narrowed to the window and the run's GPUs). */
export function throttleSummary(windowSamples: readonly GpuSample[]): ThrottleSummary {
  const masked = windowSamples.filter((sample) => sample.throttleReasons !== null && sample.throttleReasons !== undefined);
  const clocks = {
    sm_clock_mhz_mean: mean(windowSamples.flatMap((sample) => (sample.smClockMhz === null ? [] : [sample.smClockMhz]))),
    mem_clock_mhz_mean: mean(windowSamples.flatMap((sample) => (sample.memClockMhz == null ? [] : [sample.memClockMhz]))),
  };
  if (masked.length === 0) {
    const reason =
      windowSamples.length === 0
        ? 'no GPU readings inside the measured window'
        : 'the GPU readings carry no throttle reasons (older recording, amd-smi, or [Not Supported])';
    return { throttled: null, reasons: [], share_of_samples: null, samples: 0, ...clocks, reason };
  }
  const slowed = masked.filter((sample) => isSlowdown(sample.throttleReasons!));
  const union = slowed.reduce((all, sample) => all | sample.throttleReasons!, 0);
  return {
    throttled: slowed.length > 0,
    reasons: slowdownReasonNames(union),
    share_of_samples: slowed.length / masked.length,
    samples: masked.length,
    ...clocks,
    reason: null,
  };
}

/**
 * GPU energy where the engine did not run on the GPUs read (a CPU engine on a GPU box, say): the
 * GPUs' draw over the window is theirs, idle or someone else's, so it stays as context and is never
 * divided by the tokens the engine made elsewhere. RAPL (the CPU's own counters) is left as it is.
 */
export function gpuEnergyAsContext(energy: EnergySummary, why: string): EnergySummary {
  if (energy.source === null || energy.source === 'rapl') return energy;
  return { ...energy, ...NO_RATIOS, joules_window: null, context_only: true, reason: why };
}

/** Why a run's GPU energy is not its own, from where its engine ran; null when it ran on a GPU or that is unknown. */
export function engineOffTheGpu(offload: { state: string; backend: string | null } | null | undefined): string | null {
  if (!offload || offload.state !== 'none') return null;
  const engine = offload.backend ? `a ${offload.backend} engine` : 'the engine';
  return `not this run's: ${engine} with nothing offloaded ran on the CPU, so the GPU's power over the window is context only`;
}

/**
 * The per-work ratios, once the run's completed requests and output tokens are known. The
 * work spans the whole window while the readings cover a little less of it, so the ratios
 * use the covered span's mean power over the whole window (joules_window).
 */
export function withEnergyPerWork(energy: EnergySummary, work: { completedRequests: number; outputTokens: number }): EnergySummary {
  if (energy.joules === null || energy.context_only) return energy;
  const scale = energy.covered_ms && energy.window_ms ? energy.window_ms / energy.covered_ms : 1;
  const joules = energy.joules * scale;
  return {
    ...energy,
    joules_window: joules,
    joules_per_request: work.completedRequests > 0 ? joules / work.completedRequests : null,
    joules_per_output_token: work.outputTokens > 0 ? joules / work.outputTokens : null,
    output_tokens_per_joule: joules > 0 ? work.outputTokens / joules : null,
  };
}
