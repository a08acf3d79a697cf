import os from 'node:os';
import { weightsBeyondEmbeddingInHost } from '../../shared/weight-placement';
import type { BandwidthPeak, DecodeBandwidth, GpuOffload, RunSummary } from '../../shared/contract/runs';
import type { EffectiveConfig } from '../../shared/contract/server';
import { bandwidthUnavailable, decodeBandwidth, decodeLoadOf, type DecodePlacement } from '../metrics/decode-bandwidth';
import { lastLevelCacheBytes } from '../telemetry/cpu-cache';
import { gpuPeakBandwidth } from '../metrics/gpu-peak-bandwidth';
import { PROBE_QUIET_CORES, reachableMemoryRead } from '../telemetry/memory-read-probe';
import type { MeasuredRequest } from '../../shared/contract/measurement';
import { readDecodeFootprint } from '../models/decode-footprint';

/** The value of a flag in the argv the server ran with (its last occurrence wins, as in llama.cpp). */
export function argvValue(argv: readonly string[], names: readonly string[]): string | null {
  let value: string | null = null;
  for (let i = 0; i < argv.length - 1; i++) if (names.includes(argv[i]!)) value = argv[i + 1]!;
  return value;
}

/** A probe taken while other work held the CPUs reads low; it says so, and it is not cached. */
function busyNote(busy: number | null | undefined): string {
  return busy !== null && busy !== undefined && busy > PROBE_QUIET_CORES
    ? `; other processes kept ${busy.toFixed(1)} cores busy meanwhile, so it reads low and is measured again next run`
    : '';
}

function placementOf(offload: GpuOffload | null): DecodePlacement | { reason: string } {
  if (!offload) return { reason: 'no offload record for this run' };
  if (offload.state === 'none') return { device: 'cpu' };
  // Weights split between host memory and a GPU are read at two speeds: no single peak describes the step.
  const everyLayer = offload.layers !== null && offload.layers.offloaded >= offload.layers.total;
  if (everyLayer && offload.weights && offload.weights.gpu_mib > 0 && weightsBeyondEmbeddingInHost(offload.weights))
    return {
      reason: `the weights are split between host memory (${offload.weights.host_mib.toFixed(0)} MiB) and the GPU (${offload.weights.gpu_mib.toFixed(0)} MiB), read at two speeds: no single peak to compare with`,
    };
  if (offload.layers && offload.layers.offloaded > 0) return { device: 'gpu', ...offload.layers };
  return { reason: `where the layers ran is unknown: ${offload.reason ?? offload.state}` };
}

/**
 * The run's decode bandwidth: the model file's weights and KV shape, the flags the server
 * ran with, and the peak to compare with (a CPU read probe with the server's threads, cached
 * per machine, or a GPU's datasheet figure).
 */
export async function runDecodeBandwidth(input: {
  modelPath: string | null;
  effectiveConfig: EffectiveConfig | null;
  offload: GpuOffload | null;
  summary: RunSummary;
  rows: readonly MeasuredRequest[];
  cacheDir: string;
}): Promise<DecodeBandwidth> {
  if (!input.modelPath) return bandwidthUnavailable('an endpoint run: the model file, and so its weights, is not known here');
  // With a draft model a target step verifies several drafted tokens and the draft reads its own
  // weights: bytes per output token are no longer one step's weights, so no figure beats a wrong one.
  if (argvValue(input.effectiveConfig?.argv ?? [], ['-md', '--model-draft']))
    return bandwidthUnavailable(
      'speculative decoding: a target step verifies several drafted tokens and the draft model reads its own weights, so the bytes per output token are not one step’s weights',
    );
  const footprint = await readDecodeFootprint(input.modelPath);
  if ('reason' in footprint) return bandwidthUnavailable(footprint.reason);
  const placement = placementOf(input.offload);
  if ('reason' in placement) return bandwidthUnavailable(placement.reason);
  const argv = input.effectiveConfig?.argv ?? [];
  const kvCacheTypes = {
    k: argvValue(argv, ['-ctk', '--cache-type-k']) ?? 'f16',
    v: argvValue(argv, ['-ctv', '--cache-type-v']) ?? 'f16',
  };
  let peak: BandwidthPeak | null = null;
  let peakReason: string | null = null;
  if (placement.device === 'gpu') {
    ({ peak, reason: peakReason } = gpuPeakBandwidth(input.summary.telemetry?.gpu?.name.replace(/^\d+× /, '') ?? null));
  } else {
    const threads = Number(argvValue(argv, ['-t', '--threads'])) || Math.max(1, os.availableParallelism());
    try {
      const probe = await reachableMemoryRead(threads, input.cacheDir);
      peak = {
        gb_per_s: probe.gb_per_s,
        kind: 'cpu probe',
        label: `reachable with ${probe.threads} thread${probe.threads === 1 ? '' : 's'}`,
        source: `memory-read probe: median of ${probe.reps_gb_per_s.length} reps over ${(probe.buffer_bytes / 2 ** 20).toFixed(0)} MiB, ${probe.measured_at}${busyNote(probe.other_busy_cores)}`,
      };
    } catch (error) {
      peakReason = `the memory-read probe failed: ${(error as Error).message}`;
    }
  }
  const load = decodeLoadOf(input.rows);
  return decodeBandwidth({
    footprint,
    placement,
    kvCacheTypes,
    meanContextTokens: load.meanContextTokens,
    decodeSequences: load.decodeSequences,
    tpotMsMean: input.summary.metrics.tpot_ms.mean,
    peak,
    peakReason,
    lastLevelCacheBytes: placement.device === 'cpu' ? lastLevelCacheBytes() : null,
  });
}
