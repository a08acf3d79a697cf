/** Run summaries: the names of DESIGN.md's measurement contract, shared by CLI, exports and UI. */
import type { TelemetrySummary } from './telemetry';

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
}

export interface SloSpec {
  ttft_ms?: number;
  tpot_ms?: number;
  e2e_ms?: number;
}

export interface LoadDescription {
  mode: 'closed' | 'open';
  concurrency?: number;
  rate?: number;
  burstiness?: number;
  max_outstanding?: number;
}

export const METRIC_NAMES = ['ttft_ms', 'tpot_ms', 'itl_ms', 'e2e_ms', 'queue_ms', 'client_overhead_ms'] as const;
export type MetricName = (typeof METRIC_NAMES)[number];

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

export interface RunSummary {
  run_id: string;
  status: string;
  status_reason: string | null;
  workload: { name: string | null; revision: string | null };
  requests: RequestCounts;
  warmup_requests: number;
  metrics: Record<MetricName, Distribution>;
  /** Latencies cover successful requests only; percentiles interpolate linearly between order statistics. */
  measurement: { latency_population: 'successful requests'; percentile_method: 'linear'; unsupported_percentiles: Partial<Record<MetricName, string[]>>; window_ms: number | null; queue_ms: 'estimate' };
  throughput: { requests_per_s: number | null; output_tokens_per_s: number | null; total_tokens_per_s: number | null; output_tokens_total: number };
  goodput: { slo: SloSpec | null; requests_per_s: number | null; fraction: number | null };
  accepted_rate: number | null;
  groups: Record<string, GroupSummary>;
  load: { mode: string; offered: number | null; achieved: number | null; concurrency: number | null; slip_ms_p99: number | null; slip_ms_max: number | null; client_bound: boolean; note: string | null };
  cache: { cached_prompt_tokens: number; prompt_tokens: number };
  telemetry: TelemetrySummary | null;
}

