/**
 * The regression gate's question and answer (`inferlab check`, `runs.check`): which metrics it
 * judges, and what it found per metric and per side.
 */
export const CHECK_LATENCIES = ['ttft_ms', 'tpot_ms', 'e2e_ms'] as const;
export const CHECK_STATISTICS = ['p50', 'p90', 'p95', 'p99', 'mean'] as const;
type Latency = (typeof CHECK_LATENCIES)[number];
type Statistic = (typeof CHECK_STATISTICS)[number];
export type CheckedMetric = { metric: Latency; statistic: Statistic } | { metric: 'output_tokens_per_s'; statistic: 'mean' };

export const DEFAULT_CHECK_METRICS = 'tpot_ms:p50,ttft_ms:p50,output_tokens_per_s';
export const DEFAULT_CHECK_MARGIN = 0.05;
export const DEFAULT_CHECK_REPEATS = 3;

/** What the gate decided for one metric. */
export interface RegressionDecision {
  /** Candidate over baseline of the per-window statistic (geometric means of the windows); null without data. */
  ratio: number | null;
  /**
   * The one-sided bound on how much worse the candidate is, as a fraction (0.08 = 8 % worse):
   * with confidence 1 − alpha the candidate is at least this much worse. Null without a test.
   */
  worse_by_at_least: number | null;
  verdict: 'regression' | 'pass' | 'insufficient data';
  note: string | null;
}

export type CheckSideName = 'baseline' | 'candidate';

export interface CheckMetricResult extends RegressionDecision {
  metric: string;
  baseline_value: number | null;
  candidate_value: number | null;
  baseline_windows: number[];
  candidate_windows: number[];
}

export interface CheckResult {
  result: 'pass' | 'regression' | 'insufficient data';
  margin: number;
  alpha: number;
  rule: string;
  /** True when the judged baseline windows were measured beside the candidate's. */
  interleaved: boolean;
  /** The windows judged as the baseline: the stored runs, or their configuration measured again when interleaved. */
  baseline: CheckSide;
  /** The stored baseline runs when the judged baseline was measured again (interleaved); null otherwise. */
  stored_baseline: CheckSide | null;
  candidate: CheckSide;
  metrics: CheckMetricResult[];
}

export interface CheckSide {
  run_ids: string[];
  /** When the earliest of these runs started: drift since then counts as change unless interleaved. */
  measured_at: string;
  /** Windows other processes competed with (their runs flagged contaminated): the figures may be off. */
  contaminated: string[];
  /** Windows where some requests' tokens reached the client bunched (metrics/bunched-delivery.ts): their TPOT measures delivery. */
  bunched?: string[];
  engine: { commit: string | null; backend: string | null; server_path: string | null };
  model_sha256: string | null;
  workload_revision: string | null;
  profile: unknown;
}
