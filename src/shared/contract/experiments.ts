import type { Verdict } from './compare';
import type { Distribution } from './runs';

export type ExperimentKind = 'warmcold' | 'quant' | 'sweep';

export interface ConditionResult {
  name: string;
  run_ids: string[];
  metrics: Record<'ttft_ms' | 'tpot_ms' | 'itl_ms' | 'e2e_ms' | 'queue_ms' | 'client_overhead_ms', Distribution>;
  throughput: { requests_per_s: number | null; output_tokens_per_s: number | null };
  accepted_rate: number | null;
  requests: { attempted: number; completed: number; failed: number };
  evidence: { cached_prompt_tokens: number; prompt_tokens: number; timings_cache_n_max: number | null; metrics_cached_prompt_tokens: number | null };
  contaminated: boolean;
  contamination_reason: string | null;
  /** Cold-process windows: spawn → first token of each fresh server. */
  cold_start_ms?: number[];
  file_bytes?: number;
  load_ms?: number | null;
  vram?: { baseline_mib: number | null; peak_mib: number | null; server_mib: number | null };
  agreement_with_baseline?: number | null;
  first_divergence_chars_mean?: number | null;
  kld_mean?: number | null;
  same_top_p?: number | null;
  kld_error?: string | null;
  /** Sweep: the varied setting's value and the load level of this condition. */
  setting?: { field: string; value: string | number };
  concurrency?: number;
  goodput_requests_per_s?: number | null;
  ttft_p95_ms?: number | null;
  pareto?: boolean;
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
}

export interface ExperimentResult {
  experiment_id: string;
  kind: ExperimentKind;
  status: string;
  protocol: Record<string, unknown>;
  conditions: ConditionResult[];
  verdicts: VerdictRow[];
  recommendation: { choice: string | null; reason: string; excluded: { name: string; reason: string }[] };
}
