/** Run summaries: the names of the measurement contract (docs/METRICS.md), shared by CLI, exports and UI. */
import type { SloSpec } from './schema-parts';
import type { TelemetrySummary } from './telemetry';
import type { EngineBackend } from './engine';
import type { WeightPlacement } from '../weight-placement';
import { metricsInPart, metricsJudgedIn, type DistributionShownIn, type MetricInPart, type MetricJudgedIn } from '../metric-table';

export type { SloSpec } from './schema-parts';

export type TailPercentile = 'p90' | 'p95' | 'p99';

/** Summary statistics in the shape every report uses. `null` when n cannot support a value. */
export interface Distribution {
  n: number;
  mean: number | null;
  std: number | null;
  p50: number | null;
  p90: number | null;
  p95: number | null;
  p99: number | null;
  min: number | null;
  max: number | null;
  /**
   * Tail percentiles withheld (null) because n is below their minimum (PERCENTILE_MIN_N:
   * p90 n ≥ 10, p95 n ≥ 20, p99 n ≥ 100); empty when every one is supported or n is 0.
   * Summaries stored before this field existed lack it.
   */
  unsupported: TailPercentile[];
}

export interface LoadDescription {
  mode: 'closed' | 'open';
  concurrency?: number;
  rate?: number;
  burstiness?: number;
  max_outstanding?: number;
  /** Open loop sent from this many worker threads (absent: the run's own thread). */
  shards?: number;
  /** The arrival schedule's seed, when the run asked for one other than the default. */
  seed?: number;
  /** The climb to the load before the measured window, when the run asked for one. */
  ramp_up?: { shape: 'linear' | 'exponential'; seconds: number };
  /** A replayed trace: its requests and the span of their arrival times (already divided by the speed). */
  replayed_trace?: { requests: number; span_ms: number };
}

/** The distributions a summary holds in `metrics`, and open loop in `schedule_latency`: from the metric table. */
export const METRIC_NAMES: readonly MetricName[] = metricsInPart('metrics');
export type MetricName = MetricInPart<'metrics'>;

export const SCHEDULE_METRIC_NAMES: readonly ScheduleMetricName[] = metricsInPart('schedule_latency');
export type ScheduleMetricName = MetricInPart<'schedule_latency'>;

/** The latencies an SLO may limit (`slo` in the metric table), each a field of `SloSpec`. */
export const SLO_METRICS: readonly SloMetric[] = metricsJudgedIn('slo');
export type SloMetric = MetricJudgedIn<'slo'>;
/** How `--slo` names a latency: without its unit, `ttft` for `ttft_ms`. */
export const sloFlagName = (metric: SloMetric): string => metric.replace(/_ms$/, '');

/** Reasoning (`reasoning_content`) kept apart from the answer, over successful requests. */
export interface ReasoningSummary {
  requests_with_reasoning: number;
  /** Time to the first reasoning chunk and to the first answer chunk. */
  ttfr_ms: Distribution;
  ttfa_ms: Distribution;
  /** Reasoning length per request in the server's own tokens (llama.cpp reports no reasoning count). */
  tokens: Distribution;
  /** Requests whose reasoning could not be counted, and why. */
  tokens_uncounted: number;
  tokens_uncounted_reason: string | null;
}

/**
 * Function calls over the successful measured requests that offered tools: how many answers
 * called, how many calls were valid (named a declared function, arguments parsing and matching
 * its parameters), and when the calls began and were complete.
 */
export interface ToolCallSummary {
  requests: number;
  requests_with_calls: number;
  calls: number;
  valid_calls: number;
  /** valid_calls / calls; null where no answer called. */
  valid_share: number | null;
  /** Time to the first chunk of a call, and to the last chunk of an answer whose calls all parsed. */
  ttfc_ms: Distribution;
  tool_call_ms: Distribution;
  /** Argument length per calling answer in the server's own tokens. */
  argument_tokens: Distribution;
  /** Agent exchanges only (absent otherwise): each exchange a send of several steps, each step a request. */
  exchanges?: ExchangeSummary;
}

/** Agent exchanges: how many steps each took, how many ended in an answer, and their time from the first send to the last step's end. */
export interface ExchangeSummary {
  count: number;
  /** Exchanges whose last step answered without a call (the others failed a step or ran out of steps). */
  answered: number;
  steps: Distribution;
  /** Over exchanges whose every step succeeded. */
  e2e_ms: Distribution;
}

/** Speculative decoding over the successful measured requests, from the server's own draft counts. */
export interface SpeculativeSummary {
  /** Requests whose response reported draft counts, and those that reported none (too short to draft). */
  requests_with_draft: number;
  requests_without_draft: number;
  drafted_tokens: number;
  accepted_tokens: number;
  /** Accepted over drafted tokens, pooled over the run; null when nothing was drafted. */
  acceptance_rate: number | null;
  /** Each request's own acceptance rate, so a few long requests cannot hide the rest. */
  acceptance_rate_per_request: Distribution;
}

export interface RequestCounts {
  attempted: number;
  completed: number;
  failed: number;
  accepted: number;
  /** Requests with at least one acceptance check that could be evaluated. */
  checked: number;
  failures_by_class: Record<string, number>;
}

export interface GroupSummary {
  requests: RequestCounts;
  metrics: Record<MetricName, Distribution>;
  throughput: { requests_per_s: number | null; output_tokens_per_s: number | null };
  accepted_rate: number | null;
  goodput: { requests_per_s: number | null; fraction: number | null };
}

/** Whether a run's model ran on a GPU, as every run's manifest states it. */
export interface GpuOffload {
  state: 'full' | 'partial' | 'none' | 'unknown';
  backend: EngineBackend | null;
  layers: { offloaded: number; total: number } | null;
  /** Why nothing (or not everything) was offloaded; null when everything was. */
  reason: string | null;
  /** Weight bytes per device from the server's buffer lines; null when its log gave none (absent in older records). */
  weights?: WeightPlacement | null;
  /** Set on a GPU engine when most weight bytes sit in host memory: decode then runs at host-memory speed. */
  warning?: string | null;
}

/** How busy the measuring process was: a saturated or stalled loop stamps tokens late. */
export interface ClientLoad {
  /** Share of the window the main thread's event loop was running code, 0..1. */
  loop_utilization: number;
  loop_delay_ms_p99: number | null;
  loop_delay_ms_max: number | null;
  /** The whole process's CPU time over wall time, in cores (stream shards included). */
  cpu_cores: number;
  window_ms: number;
  /** Open loop over stream shards (worker threads that send and read the requests): each shard's own loop and slip. */
  shards?: ShardLoad[];
}

/** One stream shard's load over the measured window: its event loop, and how late it sent its requests. */
export interface ShardLoad {
  shard: number;
  /** Requests it sent, warmup included. */
  requests: number;
  loop_utilization: number;
  loop_delay_ms_p99: number | null;
  loop_delay_ms_max: number | null;
  /** Its requests' send time minus scheduled time; null when it sent none on a schedule. */
  slip_ms_p99: number | null;
  slip_ms_max: number | null;
}

export interface RunSummary {
  run_id: string;
  status: string;
  status_reason: string | null;
  workload: { name: string | null; revision: string | null };
  requests: RequestCounts;
  warmup_requests: number;
  metrics: Record<MetricName, Distribution>;
  /** Latencies cover successful requests only; percentiles interpolate linearly between order statistics. */
  measurement: {
    latency_population: 'successful requests';
    percentile_method: 'linear';
    /** The small-sample rule: a percentile is null below its minimum n. */
    percentile_min_n: Record<'p50' | TailPercentile, number>;
    unsupported_percentiles: Partial<Record<MetricName, string[]>>;
    window_ms: number | null;
    queue_ms: 'estimate';
    client_overhead_ms: 'includes any wait for a free server slot';
    /** The server's slot count (llama-server /props total_slots), null when unknown. */
    server_slots: number | null;
    /** Set when more requests could be outstanding than the server has slots. */
    slot_wait_note: string | null;
  };
  throughput: {
    requests_per_s: number | null;
    output_tokens_per_s: number | null;
    total_tokens_per_s: number | null;
    output_tokens_total: number;
  };
  /**
   * Good requests: succeeded, passed the workload's acceptance checks and met every SLO given.
   * `within_slo_fraction` leaves acceptance out, so a low fraction can be traced to latency or to
   * acceptance (absent from runs stored before it existed).
   */
  goodput: { slo: SloSpec | null; requests_per_s: number | null; fraction: number | null; within_slo_fraction?: number | null };
  accepted_rate: number | null;
  groups: Record<string, GroupSummary>;
  /**
   * `achieved`: open loop, (sends − 1) / (last send − first send), the send rate without the
   * drain after the last send; closed loop, attempted requests over the measured window.
   * `slip_ms_p99` is null below 100 measured sends (then client_bound judges the max slip).
   */
  load: {
    mode: string;
    offered: number | null;
    achieved: number | null;
    concurrency: number | null;
    slip_ms_p99: number | null;
    slip_ms_max: number | null;
    /** Open loop: the generator fell behind its schedule; closed loop too: the client's own loop was saturated or stalled (`client`). */
    client_bound: boolean;
    note: string | null;
    /** The client's own load over the window (runner/client-load.ts); absent from runs stored before it was measured. */
    client?: ClientLoad;
    /** Absent from runs stored before the check existed. */
    steady_state?: SteadyStateCheck;
  };
  /** Open loop only: latency from each request's scheduled time, which a stalled generator cannot hide. */
  schedule_latency: Record<ScheduleMetricName, Distribution> | null;
  /** Null when no measured request streamed reasoning text. */
  reasoning: ReasoningSummary | null;
  /** Absent or null when no measured request reported draft counts. */
  speculative?: SpeculativeSummary | null;
  /** Absent or null when no measured request offered tools. */
  tool_calls?: ToolCallSummary | null;
  cache: { cached_prompt_tokens: number; prompt_tokens: number };
  telemetry: TelemetrySummary | null;
  /** Memory bandwidth the decode steps used (docs/METRICS.md); absent from runs stored before it was measured. */
  decode_bandwidth?: DecodeBandwidth;
  /** Where the model ran (managed servers only); absent in older records and for endpoints. */
  gpu_offload?: GpuOffload | null;
  /** Whether the client received tokens as the server made them (metrics/bunched-delivery.ts); absent from older runs. */
  delivery?: BunchedDelivery;
  /**
   * Conversations only (absent or null otherwise): per turn index, how its requests fared, so
   * prefix reuse shows as the history grows. Means over successful requests that reported the count.
   */
  turns?: TurnSummary[] | null;
  /** Embeddings workloads only (absent otherwise): inputs embedded and the rates over the measured window. */
  embeddings?: EmbeddingsSummary | null;
  /** Reranking workloads only (absent otherwise): the same figures, `inputs` being the documents scored. */
  rerank?: EmbeddingsSummary | null;
  /**
   * Workloads that show images to a managed llama-server (absent otherwise, and null where its log
   * said nothing of them): what the log says of encoding each picture and decoding it into the model.
   */
  images?: ImagesSummary | null;
}

/**
 * The pictures of a run's measured window, from the managed server's log: a picture served from the
 * prompt cache is neither encoded nor decoded again, so `images` can be fewer than the requests that
 * showed one.
 */
export interface ImagesSummary {
  /** Pictures decoded into the model (all their batches), and their tokens. */
  images: number;
  image_tokens: number;
  tokens_per_image: { mean: number; min: number; max: number } | null;
  /** Runs of the encoder: one picture each, or several the server batched (its own log line says which). */
  encodes: number;
  /** Milliseconds per encode: the encoder's forward pass, from its log lines' own clock. */
  image_encode_ms: Distribution | null;
  /** Milliseconds per picture to decode its embeddings into the model, summed over its batches. */
  image_decode_ms: Distribution | null;
  source: string;
  /** True where the warm-up requests' pictures are left out; absent in summaries stored before they were (which include them). */
  measured_window_only?: boolean;
}

/**
 * An embeddings run's own figures, over its successful measured requests and the same window
 * as `throughput` (docs/METRICS.md, "Embeddings"). Latency per request is `metrics.e2e_ms`.
 */
export interface EmbeddingsSummary {
  requests: number;
  /** Texts embedded: one vector each. */
  inputs: number;
  inputs_per_request_mean: number | null;
  inputs_per_s: number | null;
  /** Input tokens as the server counted them (usage.prompt_tokens); null where no request reported its count. */
  input_tokens: number | null;
  input_tokens_per_s: number | null;
}

export interface BunchedDelivery {
  /** Successful requests of three or more tokens. */
  judged_requests: number;
  /** Of those, the ones whose tokens reached the client much faster than the server decoded them. */
  bunched_requests: number;
  /** What that means and what to do; null when none came bunched. */
  warning: string | null;
}

/** Whether the measured window's throughput was steady (metrics/steady-state.ts). */
export interface SteadyStateCheck {
  /** Completions in the first and the second half of the window. */
  first_half: number;
  second_half: number;
  /** Second-half throughput over the first half's, minus one; null when the first half had none. */
  change: number | null;
  /** Two-sided exact binomial test of "each completion is equally likely in either half". */
  p_value: number | null;
  /** The throughput was still moving: the window did not measure one steady state. */
  trending: boolean;
  /** What was tested, in words. */
  rule: string;
}

/** A turn's distributions: those the per-turn table shows (`perTurn` in the metric table). */
export type TurnMetric = DistributionShownIn<'perTurn'>;

export interface TurnSummary extends Record<TurnMetric, Distribution> {
  turn: number;
  requests: number;
  failed: number;
  prompt_tokens_mean: number | null;
  cached_tokens_mean: number | null;
  /** Cached over prompt tokens, summed over the turn's requests that reported both. */
  cached_share: number | null;
}

/** The peak a decode bandwidth is shown against. */
export interface BandwidthPeak {
  gb_per_s: number;
  kind: 'cpu probe' | 'gpu datasheet';
  /** e.g. "reachable with 2 threads" or "NVIDIA H100 SXM5 80GB". */
  label: string;
  source: string;
}

/**
 * bytes_per_step = weight_bytes + decode_sequences × kv_bytes_per_sequence;
 * effective_gb_per_s = bytes_per_step × 1000 / tpot_ms_mean / 1e9.
 */
export interface DecodeBandwidth {
  placement: 'cpu' | 'gpu' | null;
  /** Weights one decode step streams on that device (the offloaded layers' share on a GPU). */
  weight_bytes: number | null;
  layers_counted: { counted: number; total: number } | null;
  kv_cache_types: { k: string; v: string } | null;
  /** Mean over successful requests of prompt tokens + half the output tokens: the mean context while decoding. */
  mean_context_tokens: number | null;
  /** KV-cache bytes one sequence reads per step at the mean context. */
  kv_bytes_per_sequence: number | null;
  /** Sequences decoding at once while any did: summed decode time (ttft to e2e) of successful requests over the union of those spans. */
  decode_sequences: number | null;
  bytes_per_step: number | null;
  /** bytes_per_step / decode_sequences. */
  bytes_per_token: number | null;
  tpot_ms_mean: number | null;
  /** decode_sequences × 1000 / tpot_ms_mean. */
  decode_tokens_per_s: number | null;
  effective_gb_per_s: number | null;
  peak: BandwidthPeak | null;
  peak_reason: string | null;
  /** effective / peak. */
  utilization: number | null;
  /** Why effective_gb_per_s is null. */
  reason: string | null;
  /**
   * CPU runs whose bytes per step are within a few times the last-level cache: why the share of the
   * DRAM probe can pass 100 %. Absent from runs stored before it was checked.
   */
  cache_note?: string | null;
}
