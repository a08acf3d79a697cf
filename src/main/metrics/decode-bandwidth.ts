import type { BandwidthPeak, DecodeBandwidth } from '../../shared/contract/runs';
import type { MeasuredRequest } from '../../shared/contract/measurement';
import type { DecodeFootprint } from '../models/decode-footprint';
import { kvBytesPerElement } from '../models/kv-cache-types';

/** Where the weights ran: on the CPU all of them; on a GPU the offloaded layers (llama.cpp counts the output as one more). */
export type DecodePlacement = { device: 'cpu' } | { device: 'gpu'; offloaded: number; total: number };

export interface DecodeBandwidthInput {
  footprint: DecodeFootprint;
  placement: DecodePlacement;
  kvCacheTypes: { k: string; v: string };
  meanContextTokens: number | null;
  decodeSequences: number | null;
  tpotMsMean: number | null;
  peak: BandwidthPeak | null;
  peakReason: string | null;
  /** CPU runs: the last-level cache, to say when the step's bytes are near it (cpu-cache.ts). */
  lastLevelCacheBytes?: number | null;
}

/**
 * Bytes per step under this many times the last-level cache are not all read from DRAM: on
 * this project's 2-core EPYC (32 MiB L3) the 87 MiB f16 demo model decoded at 128 % of the
 * probe's DRAM figure.
 */
export const CACHE_NEAR_FACTOR = 4;

/**
 * Why a CPU step's share of the DRAM probe can pass 100 %: said where the step is near the cache,
 * and wherever the share did pass it (a machine that does not report its cache size, as many
 * virtual machines do not, would otherwise show a share over 100 % with no word on it).
 */
function cacheNote(
  placement: DecodePlacement,
  bytesPerStep: number,
  lastLevelCacheBytes: number | null | undefined,
  utilization: number | null,
): string | null {
  if (placement.device !== 'cpu') return null;
  const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(bytes < 10 * 2 ** 20 ? 1 : 0)} MiB`;
  if (lastLevelCacheBytes && bytesPerStep < CACHE_NEAR_FACTOR * lastLevelCacheBytes)
    return `the bytes read per step are under ${CACHE_NEAR_FACTOR}× this CPU's ${mib(lastLevelCacheBytes)} last-level cache: part of each step is read from cache, which the DRAM probe does not measure, so the share can pass 100 %`;
  if (utilization === null || utilization <= 1) return null;
  return `the share passes 100 %: part of each step was read from the CPU's caches, which the DRAM probe does not measure${lastLevelCacheBytes ? '' : ' (this machine does not report its cache size)'}`;
}

const EMPTY: DecodeBandwidth = {
  placement: null,
  weight_bytes: null,
  layers_counted: null,
  kv_cache_types: null,
  mean_context_tokens: null,
  kv_bytes_per_sequence: null,
  decode_sequences: null,
  bytes_per_step: null,
  bytes_per_token: null,
  tpot_ms_mean: null,
  decode_tokens_per_s: null,
  effective_gb_per_s: null,
  peak: null,
  peak_reason: null,
  utilization: null,
  reason: null,
  cache_note: null,
};

export function bandwidthUnavailable(reason: string, partial: Partial<DecodeBandwidth> = {}): DecodeBandwidth {
  return { ...EMPTY, ...partial, reason };
}

/**
 * Memory bandwidth the decode steps used. One step reads the weights once for every
 * sequence in the batch and each sequence's own KV cache:
 *   bytes_per_step = weights + sequences × n_layer × context × (n_head_kv × head_dim_k × bytes_k + n_head_kv × head_dim_v × bytes_v)
 * and a sequence takes one step per TPOT, so
 *   GB/s = bytes_per_step × (1000 / tpot_ms) / 1e9 = bytes_per_token × decode_tokens_per_s / 1e9.
 */
export function decodeBandwidth(input: DecodeBandwidthInput): DecodeBandwidth {
  const { footprint, placement } = input;
  const layers = placement.device === 'cpu' ? footprint.nLayer : Math.min(placement.offloaded, footprint.nLayer);
  const headCounted = placement.device === 'cpu' || placement.offloaded > footprint.nLayer;
  const weightBytes = (footprint.blockWeightBytes * layers) / footprint.nLayer + (headCounted ? footprint.headWeightBytes : 0);
  const bytesK = kvBytesPerElement(input.kvCacheTypes.k);
  const bytesV = kvBytesPerElement(input.kvCacheTypes.v);
  const known: Partial<DecodeBandwidth> = {
    placement: placement.device,
    weight_bytes: weightBytes,
    layers_counted: { counted: layers, total: footprint.nLayer },
    kv_cache_types: input.kvCacheTypes,
    mean_context_tokens: input.meanContextTokens,
    decode_sequences: input.decodeSequences,
    tpot_ms_mean: input.tpotMsMean,
    peak: input.peak,
    peak_reason: input.peakReason,
  };
  if (bytesK === null || bytesV === null)
    return bandwidthUnavailable(`unknown KV-cache type ${bytesK === null ? input.kvCacheTypes.k : input.kvCacheTypes.v}`, known);
  if (input.meanContextTokens === null) return bandwidthUnavailable('no successful request reported its token counts', known);
  if (input.tpotMsMean === null || input.tpotMsMean <= 0 || input.decodeSequences === null || input.decodeSequences <= 0)
    return bandwidthUnavailable('no successful request decoded more than one token (no TPOT)', known);
  const kvPerToken = footprint.nHeadKv * (footprint.headDimK * bytesK + footprint.headDimV * bytesV);
  const kvBytesPerSequence = layers * input.meanContextTokens * kvPerToken;
  const bytesPerStep = weightBytes + input.decodeSequences * kvBytesPerSequence;
  const stepsPerSecond = 1000 / input.tpotMsMean;
  const effective = (bytesPerStep * stepsPerSecond) / 1e9;
  const utilization = input.peak ? effective / input.peak.gb_per_s : null;
  return {
    ...EMPTY,
    ...known,
    kv_bytes_per_sequence: kvBytesPerSequence,
    bytes_per_step: bytesPerStep,
    bytes_per_token: bytesPerStep / input.decodeSequences,
    decode_tokens_per_s: input.decodeSequences * stepsPerSecond,
    effective_gb_per_s: effective,
    utilization,
    cache_note: cacheNote(placement, bytesPerStep, input.lastLevelCacheBytes, utilization),
    reason:
      footprint.unknownTypeTensors.length > 0
        ? `weights of unknown type left out: ${footprint.unknownTypeTensors.slice(0, 3).join(', ')}`
        : null,
  };
}

/**
 * From the run's successful measured requests: the mean context while decoding (prompt plus
 * half the output, the midpoint of a request's decode) and how many sequences decoded at
 * once while any did: their summed decode time (ttft to e2e) over the union of those spans.
 */
export function decodeLoadOf(rows: readonly MeasuredRequest[]): { meanContextTokens: number | null; decodeSequences: number | null } {
  const ok = rows.filter((row) => !row.warmup && row.error_class === null);
  const counted = ok.filter((row) => row.prompt_tokens !== null && row.output_tokens !== null);
  const meanContextTokens =
    counted.length === 0 ? null : counted.reduce((sum, row) => sum + row.prompt_tokens! + row.output_tokens! / 2, 0) / counted.length;
  const spans = ok
    .filter((row) => row.e2e_ms !== null && row.ttft_ms !== null && row.e2e_ms > row.ttft_ms)
    .map((row) => [row.t0_ms + row.ttft_ms!, row.t0_ms + row.e2e_ms!] as const)
    .sort((a, b) => a[0] - b[0]);
  let summed = 0;
  let union = 0;
  let coveredTo = Number.NEGATIVE_INFINITY;
  for (const [start, end] of spans) {
    summed += end - start;
    if (end > coveredTo) {
      union += end - Math.max(start, coveredTo);
      coveredTo = end;
    }
  }
  return { meanContextTokens, decodeSequences: union > 0 ? summed / union : null };
}
