import { metricsShownIn } from '../metric-columns';
import { isPerRequest, type DistributionShownIn } from '../metric-table';

/**
 * Above this many requests per run on both sides, Compare's intervals come from order statistics
 * instead of resampling: they hold a zero difference as often as a 95 % interval should from just
 * above it, for a long tail and for two modes alike (test/unit/compare-interval-simulation.test.ts),
 * and cost no resample. The UI and the CLI say where the interval came from.
 */
export const BOOTSTRAP_MAX_SAMPLES = 500;

/** The note on a difference between two single runs: its interval holds request noise only. */
export const REQUEST_NOISE_ONLY =
  'request noise only: one window per run, so run-to-run drift is not in this interval and no faster/slower verdict is given; compare repeated windows in an experiment for one';

/** Whether a difference's interval is of request noise only, shown in place of its verdict. */
export const isRequestNoiseOnly = (note: string | null | undefined): boolean => note === REQUEST_NOISE_ONLY;

/**
 * What a difference B − A means, decided from its interval:
 * - `faster` / `slower`: the whole (corrected) interval lies on one side of zero;
 * - `equivalent`: the whole interval lies inside ±margin of A (TOST), i.e. the two are the same
 *   within the stated margin — a positive claim, unlike
 * - `no significant difference`: the interval crosses zero but is too wide to call equivalence;
 * - `insufficient data`: below the minimum windows or requests per side, no claim at all.
 * For metrics where higher is better (throughput, acceptance), `faster` means "better".
 */
export type Verdict = 'faster' | 'slower' | 'equivalent' | 'no significant difference' | 'insufficient data';

export interface ComparisonRow {
  metric: string;
  /** Index into the compared runs: the baseline is run 0. */
  values: (number | null)[];
  differences: ({ difference: number | null; ci: [number, number] | null; verdict: Verdict; note?: string | null } | null)[];
  unit: string;
}

/** The distributions Compare draws a CDF of: those it shows (`shows.compare` in the metric table). */
export type CdfMetric = DistributionShownIn<'compare'>;
export const CDF_METRICS: readonly CdfMetric[] = metricsShownIn('compare')
  .map(({ metric }) => metric)
  .filter(isPerRequest);

export interface ComparedRun {
  runId: string;
  label: string;
  status: string;
  model: string | null;
  workload: string | null;
  workloadRevision: string | null;
  requests: number;
  /**
   * Ascending samples for the CDF charts, by metric (`CDF_METRICS`): every request's value up to
   * 256, else 256 evenly spaced order statistics, the least and greatest included.
   */
  cdf: Record<CdfMetric, number[]>;
  vramPeakMib: number | null;
  /** Output tokens per second and TTFT p95 of the run: one point of the throughput/latency trade-off. */
  outputTokensPerS: number | null;
  ttftP95Ms: number | null;
  /** TTFT p50 per workload group. */
  groups: Record<string, { ttftP50Ms: number | null; requests: number }>;
  /** GPU memory over the run (t ms, MiB), when the run had GPU telemetry. */
  vramTimeline: [number, number][];
}

export interface Comparison {
  runs: ComparedRun[];
  rows: ComparisonRow[];
  /** Warnings such as "different workload revisions". */
  notes: string[];
}
