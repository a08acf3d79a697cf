import type { Verdict } from './compare';
import type { BunchedDelivery, Distribution, MetricName, SloSpec, SpeculativeSummary } from './runs';
import type { ExperimentKind } from './specs';
import type { ExperimentProtocols } from './experiment-kinds/registry';

export type { ExperimentKind } from './specs';

export type WindowDelivery = Pick<BunchedDelivery, 'judged_requests' | 'bunched_requests'>;

export interface ConditionEmbeddings {
  inputs_per_s: number | null;
  inputs_per_s_ci: [number, number] | null;
  window_inputs_per_s: number[];
  inputs_per_request_mean: number | null;
}

export interface ConditionResult {
  name: string;
  run_ids: string[];
  metrics: Record<MetricName, Distribution>;
  /** Means over windows, each window's rate over its own measured span, with 95 % intervals over windows. */
  throughput: {
    requests_per_s: number | null;
    output_tokens_per_s: number | null;
    requests_per_s_ci?: [number, number] | null;
    output_tokens_per_s_ci?: [number, number] | null;
    windows?: number;
  };
  accepted_rate: number | null;
  requests: { attempted: number; completed: number; failed: number };
  evidence: {
    cached_prompt_tokens: number;
    prompt_tokens: number;
    timings_cache_n_max: number | null;
    metrics_cached_prompt_tokens: number | null;
  };
  contaminated: boolean;
  contamination_reason: string | null;
  /**
   * An embeddings condition's texts per second: each window's own (its run's `embeddings.inputs_per_s`,
   * in window order), their mean and 95 % interval over windows. Absent where the workload generates answers.
   */
  embeddings?: ConditionEmbeddings;
  /** Each window's bunched token delivery (RunSummary.delivery, counts only), in window order; absent from older results. */
  delivery?: WindowDelivery[];
  /** The first window's warning on where the weights sat (GpuOffload.warning); absent from older results. */
  offload_warning?: string | null;
  /** Energy per output token and decode memory bandwidth, means over the windows that have them; absent from older experiments. */
  efficiency?: ConditionEfficiency;
  /** Cold-process windows: spawn → first token of each fresh server. */
  cold_start_ms?: number[];
  file_bytes?: number;
  /** KV cache experiments: the cache types this condition ran, and the KV buffers the server allocated (MiB, from its log). */
  cache_types?: { k: string; v: string };
  kv_cache_mib?: number | null;
  /** LoRA adapter conditions: the adapter applied (null for the base model), the memory its weights took (the server's LoRA buffer log lines, summed over devices), and the servers' mean load time (spawn to ready). */
  lora?: { file: string; scale: number; swapped?: boolean } | null;
  lora_mib?: number | null;
  server_load_ms?: number | null;
  /** Accepted of judged per workload group, where a condition's answers are checked (kvcache). */
  acceptance_by_group?: Record<string, { accepted: number; judged: number }>;
  load_ms?: number | null;
  vram?: { baseline_mib: number | null; peak_mib: number | null; server_mib: number | null };
  agreement_with_baseline?: number | null;
  first_divergence_chars_mean?: number | null;
  kld_mean?: number | null;
  same_top_p?: number | null;
  kld_error?: string | null;
  /** Greedy token agreement with the baseline, from an untimed pass (token ids from /completion). */
  token_agreement?: TokenAgreement | null;
  /** The baseline's pass against a second pass of itself: what nondeterminism alone gives. */
  token_agreement_noise_floor?: TokenAgreement | null;
  /** Measured acceptance: accepted of judged (requests with checks, plus failed requests). */
  acceptance?: { accepted: number; judged: number } | null;
  /** The evaluation text KLD was computed on, as llama-perplexity tokenizes it. */
  kld_tokens?: number | null;
  kld_context?: number | null;
  /** Sweep: the varied setting's value and the load level of this condition. */
  setting?: { field: string; value: string | number };
  concurrency?: number;
  goodput_requests_per_s?: number | null;
  ttft_p95_ms?: number | null;
  pareto?: boolean;
  /** Warm/cold: what the server's own per-request cache counts say about the condition's claim. */
  cache_evidence?: CacheEvidence;
  /** Cold-process: one entry per fresh server start, and the distributions over them. */
  cold_starts?: ColdStarts;
  /** Sweep: windows (fresh servers) this condition ran in, the share of its requests that met every SLO, and whether that share reaches the attainment target. */
  windows_run?: number;
  goodput_fraction?: number | null;
  meets_slo?: boolean | null;
  /** Speculative decoding: drafted and accepted tokens over the condition's windows. */
  speculative?: SpeculativeSummary | null;
}

/**
 * Per-request cache evidence for a warm/cold condition. A request `confirms` the claim, `contradicts`
 * it, or is `unknown` when the server reported no cache count (never read as 0).
 */
export interface CacheEvidence {
  expect: 'no reuse' | 'prefix reuse';
  /** The rule a request was judged by, in words. */
  rule: string;
  measured: number;
  confirmed: number;
  contradicted: number;
  unknown: number;
  /** Reads as "31 of 32 requests reused ≥ 95 % of their shared prefix". */
  summary: string;
}

export interface ColdStarts {
  starts: {
    run_id: string;
    spawn_to_ready_ms: number | null;
    ttft_ms: number | null;
    cached_tokens: number | null;
    requests_before: number;
  }[];
  spawn_to_ready_ms: Distribution;
  ttft_ms: Distribution;
}

export interface VerdictRow {
  metric: string;
  a: string;
  b: string;
  a_value: number | null;
  b_value: number | null;
  difference: number | null;
  ci: [number, number] | null;
  verdict: Verdict;
  /** Difference as a fraction of A's value, and its interval on that scale. */
  relative_difference?: number | null;
  relative_ci?: [number, number] | null;
  /** Confidence level of `ci` after the correction across the experiment's verdicts (0.95 uncorrected). */
  confidence?: number | null;
  /** Equivalence margin, as a fraction of A's value. */
  equivalence_margin?: number | null;
  /** Windows and measured requests per side: [A, B]. */
  windows?: [number, number];
  requests?: [number, number];
  /** Why there is no verdict, or what qualifies it ("request noise only", "n too small for p95"). */
  note?: string | null;
}

export interface TokenAgreement {
  /** Mean over items of the share of the baseline's tokens reproduced before the first divergence. */
  mean: number | null;
  /** Share of items whose token sequences are identical. */
  exact_match_rate: number | null;
  /** Mean token index of the first divergence, over the items that diverge (null when none do). */
  first_divergence_index_mean: number | null;
  items: number;
  /** Why there is no figure, when there is none. */
  error?: string | null;
}

export type GateStatus = 'pass' | 'fail' | 'unknown' | 'not applicable';

/** One gate of the recommendation, with its threshold and each condition's value against it. */
export interface RecommendationGate {
  name: string;
  threshold: string;
  conditions: { name: string; value: number | null; status: GateStatus; detail: string }[];
}

/** Each kind's protocol record, declared beside its spec in experiment-kinds/ and listed in its registry. */
export type { ExperimentProtocols } from './experiment-kinds/registry';

/** An experiment's result, told apart by its kind: testing `result.kind` types `result.protocol` as that kind's record. */
export type ExperimentResult = { [K in ExperimentKind]: ExperimentResultOf<K> }[ExperimentKind];

export interface ExperimentResultOf<K extends ExperimentKind> extends ExperimentResultFields {
  kind: K;
  /** How it ran, as recorded before the first window (the KL-divergence pass adds its text once it ran). */
  protocol: ExperimentProtocols[K];
}

export interface ExperimentResultFields {
  experiment_id: string;
  status: string;
  conditions: ConditionResult[];
  verdicts: VerdictRow[];
  recommendation: {
    choice: string | null;
    reason: string;
    excluded: { name: string; reason: string }[];
    /** Quantization: every gate applied, and the objective the eligible were ranked by. */
    gates?: RecommendationGate[];
    objective?: string;
  };
  /** Capacity experiments: the search, each load it measured, and the answer. */
  capacity?: CapacityResult;
  /** Speculative-decoding experiments: whether greedy outputs stay the same with the draft. */
  greedy_equivalence?: GreedyEquivalence;
  /**
   * With a cooldown (`--cooldown S`): each wait before a window after the first, in order, so a
   * window that started warm (the timeout came first) or without any wait is on record.
   */
  cooldown_waits?: CooldownWait[];
  /** The kinds that can stop early (quant, warmcold, kvcache): how many windows ran of the most, and why it stopped there. */
  stopping?: ExperimentStopping;
}

/** How an experiment's windows ended: sequential (looked at halfway and at the end) or fixed (`--fixed`). */
export interface ExperimentStopping {
  design: 'sequential' | 'fixed';
  /** The windows per condition at which the verdicts were looked at. */
  looks: number[];
  windows_run: number;
  windows_max: number;
  reason: string;
  /** The comparisons the answer needs that were still open when the windows ran out. */
  open: string[];
}

export interface ConditionEfficiency {
  /** Mean of each window's joules per output token, with a 95 % interval over windows. */
  joules_per_output_token: number | null;
  joules_per_output_token_ci: [number, number] | null;
  energy_windows: number;
  /** Why no window has energy (the first window's reason), or null. */
  energy_reason: string | null;
  /** Mean of each window's effective decode bandwidth and its share of the peak it was compared with. */
  decode_gb_per_s: number | null;
  bandwidth_utilization: number | null;
  /** The peak the utilization is a share of (the first window's), e.g. "reachable with 2 threads (probe)". */
  bandwidth_peak: string | null;
  bandwidth_windows: number;
  bandwidth_reason: string | null;
  /** The first window's cache_note (DecodeBandwidth): a share of the DRAM probe that cache reads may lift. */
  bandwidth_cache_note?: string | null;
}

export interface CooldownWait {
  /** true: back at the idle baseline; false: the timeout came first; null: nothing to wait for (the reason says why). */
  reached: boolean | null;
  waited_ms: number;
  /** Which GPU figure was still above its baseline at the timeout, or why nothing was waited for. */
  reason: string | null;
}

/**
 * Temperature-0 outputs of each draft setting against the spec-off pass, token for token, with
 * the spec-off pass repeated as the noise floor: batched verification may round differently,
 * so only a mismatch on an item where spec-off agreed with itself counts against a setting.
 */
export interface GreedyEquivalence {
  rule: string;
  items: number;
  noise_floor: TokenAgreement;
  /** Items whose two spec-off passes differed: nondeterminism, not the draft. */
  floor_mismatches: string[];
  settings: {
    name: string;
    agreement: TokenAgreement;
    /** Items whose tokens differ from spec-off, and of those the ones where spec-off agreed with itself. */
    mismatches: string[];
    beyond_floor: string[];
    equivalent: boolean;
  }[];
}

/** One load a capacity search measured. */
export interface CapacityStepResult {
  load: number;
  phase: 'bracket' | 'bisect';
  /** `invalid`: the load generator stayed behind its schedule, so the load could not be measured. */
  decision: 'meets' | 'misses' | 'inconclusive' | 'invalid';
  looks: number;
  /** Requests judged (measured, failed included). */
  requests: number;
  /** Per SLO metric: requests above its limit (failed requests count as above). */
  violations: Record<string, number>;
  /** Per SLO metric: the nearest-rank percentile over the judged requests; null when it falls on a failed request. */
  percentile_ms: Record<string, number | null>;
  failed: number;
  /** Share of requests within every limit, and those per second of the measured window. */
  good_fraction: number | null;
  goodput_requests_per_s: number | null;
  /** Requests completed per second of the measured window (goodput counts only the good ones). */
  throughput_requests_per_s: number | null;
  /** The load delivered: the achieved send rate (open loop) or the requests per second (closed loop). */
  achieved_load: number | null;
  slip_ms: number | null;
  client_bound_samples: number;
  /** Samples other processes competed with, measured again like client-bound ones; absent from older results. */
  contaminated_samples?: number;
  /** Why the load's last set-aside sample was not counted; an 'invalid' load could not get past it. */
  invalid_reason?: 'client behind' | 'other processes competed' | null;
  run_ids: string[];
}

export interface CapacityResult {
  by: 'rate' | 'concurrency' | 'users';
  unit: 'req/s' | 'concurrent requests' | 'concurrent users';
  percentile: number;
  slo: SloSpec;
  alpha: number;
  alpha_per_look: number;
  requests_per_look: number;
  min_requests_to_meet: number;
  /** The decision rule, in words. */
  rule: string;
  /** The highest load shown to meet every SLO; null when none was. */
  capacity: number | null;
  /** Where the limit lies: from the capacity up to the lowest load shown to miss (null high: none was). */
  interval: { low: number; high: number | null } | null;
  knee: number | null;
  knee_rule: string;
  stopped: string;
  steps: CapacityStepResult[];
}

export type { QualityGate, QuantConstraints, QuantObjective } from './specs';
