/**
 * The regression gate's question and answer (`inferlab check`, `runs.check`): which metrics it
 * judges, and what it found per metric and per side.
 */
import {
  isPerRequest,
  judgedStatistics,
  metricsJudgedIn,
  type DistributionJudgedIn,
  type JudgedStatistic,
  type RateJudgedIn,
} from '../metric-table';

/** What the gate judges: `gate` in the metric table, each metric with the statistics `--metrics` accepts for it. */
export type CheckedMetric = JudgedStatistic<'gate'>;
/** The latencies it judges, and the rates (each judged on the mean of its windows' rates). */
export const CHECK_LATENCIES: readonly DistributionJudgedIn<'gate'>[] = metricsJudgedIn('gate').filter(isPerRequest);
export const CHECK_RATES = metricsJudgedIn('gate').filter((metric) => !isPerRequest(metric)) as readonly RateJudgedIn<'gate'>[];
/** Every statistic the gate judges a latency on, in the table's order. */
export const CHECK_STATISTICS = [
  ...new Set(judgedStatistics('gate').flatMap(({ metric, statistic }) => (isPerRequest(metric) ? [statistic] : []))),
];

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
