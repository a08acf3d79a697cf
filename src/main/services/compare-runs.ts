import { CDF_METRICS, type CdfMetric, type ComparedRun, type Comparison, type ComparisonRow } from '../../shared/contract/compare';
import type { RunSummary } from '../../shared/contract/runs';
import { ErrorCode } from '../../shared/errors';
import { columnLabel, columnsShownIn, holdsPart, metricFigure } from '../../shared/metric-columns';
import { KIND_OWN_PARTS, type DistributionShownIn, type Statistic } from '../../shared/metric-table';
import { AppError } from '../core/errors';
import { BootstrapSample, differenceOfSamples, type Statistic as BootstrapStatistic } from '../metrics/compare';
import type { SortedLatencyColumns } from '../store/latency-columns';
import type { RunStore } from '../store/run-store';
import { engineOffTheGpu } from '../telemetry/window-energy';

/**
 * Points per CDF sent to the UI: 256 evenly spaced order statistics, the least and the greatest
 * among them, a step under 0.4 % of the requests. Twenty runs of 1,000 points each took the chart
 * 190 ms to draw and a megabyte to send (docs/PERFORMANCE.md); 256 draw the same curve at the width
 * of the chart.
 */
export const CDF_SAMPLE_CAP = 256;

/** Each latency ascending, finite, keyed by its metric: sorted once per run, then sampled (the CDFs) and compared (the rows). */
type SortedLatencies = Omit<SortedLatencyColumns, 'requests'>;
type RunWithSummary = Omit<ComparedRun, 'cdf'> & { summary: RunSummary | null; sorted: SortedLatencies; ranOnCpu: boolean };

/** Compare's rows, from the metric table (`shows.compare`): the latencies first, each with its interval, then the rates. */
const COMPARE_COLUMNS = columnsShownIn('compare');

const BOOTSTRAPPED: readonly Statistic[] = ['p50', 'p95', 'mean'] satisfies readonly BootstrapStatistic[];

/** The statistic as the bootstrap takes it; the table gives Compare no other (test/unit/metric-columns.test.ts). */
function bootstrapped(statistic: Statistic): BootstrapStatistic {
  if (!BOOTSTRAPPED.includes(statistic)) throw new Error(`Compare has no interval for the statistic ${statistic}`);
  return statistic as BootstrapStatistic;
}

/** A stored summary when it has the run summary's shape; null for none, and for the flat one-request summaries older first-request runs stored. */
export function storedRunSummary(json: string | null): RunSummary | null {
  if (!json) return null;
  const parsed = JSON.parse(json) as Partial<RunSummary>;
  return typeof parsed.metrics === 'object' && typeof parsed.throughput === 'object' ? (parsed as RunSummary) : null;
}

/** Evenly spaced order statistics: the CDF's shape in at most CDF_SAMPLE_CAP points. */
function cdfPoints(sorted: Float64Array): number[] {
  if (sorted.length <= CDF_SAMPLE_CAP) return Array.from(sorted);
  return Array.from({ length: CDF_SAMPLE_CAP }, (_, i) => sorted[Math.floor((i * (sorted.length - 1)) / (CDF_SAMPLE_CAP - 1))]!);
}

/**
 * One run as Compare shows it: every request's latencies, its headline figures and its VRAM over time.
 * A run whose engine ran on the CPU has no VRAM of its own: the GPU's memory then belongs to whatever
 * else held it, and is left out rather than set beside another run's as if it were this one's.
 */
function comparedRun(runs: RunStore, id: string): RunWithSummary {
  const run = runs.findRun(id);
  if (!run) throw new AppError(ErrorCode.NotFound, `No run ${id}`);
  const latencies = runs.sortedLatencyColumns(run.id);
  const summary = storedRunSummary(run.summary_json);
  const ownsGpuMemory = engineOffTheGpu(summary?.gpu_offload) === null;
  return {
    runId: run.id,
    label: `${run.id.slice(0, 8)} ${run.model_ref ?? ''} ${run.workload_name ?? ''}`.trim(),
    status: run.status,
    model: run.model_ref,
    workload: run.workload_name,
    workloadRevision: run.workload_revision,
    requests: latencies.requests,
    sorted: { ttft_ms: latencies.ttft_ms, tpot_ms: latencies.tpot_ms, e2e_ms: latencies.e2e_ms },
    vramPeakMib: ownsGpuMemory ? (summary?.telemetry?.gpu?.peak_used_mib ?? null) : null,
    ranOnCpu: !ownsGpuMemory,
    summary,
    outputTokensPerS: summary?.throughput?.output_tokens_per_s ?? null,
    ttftP95Ms: summary?.metrics?.ttft_ms.p95 ?? null,
    groups: Object.fromEntries(
      Object.entries(summary?.groups ?? {}).map(([name, group]) => [
        name,
        { ttftP50Ms: group.metrics.ttft_ms.p50, requests: group.requests.attempted },
      ]),
    ),
    vramTimeline: ownsGpuMemory
      ? (runs.telemetry(run.id).find((series) => series.series === 'gpu0.memory_used')?.points ?? []).filter(
          (_, index, all) => all.length <= 2000 || index % Math.ceil(all.length / 2000) === 0,
        )
      : [],
  };
}

/**
 * The store's sorted column of a latency Compare shows. Compare reads no request rows, so a latency
 * given `shows.compare` without a sorted column in the store does not compile here.
 */
const sortedColumnOf = (metric: DistributionShownIn<'compare'>): keyof SortedLatencies => metric;

/** Latency statistics against the first run, each difference with its bootstrap interval and verdict. */
function latencyRows(compared: RunWithSummary[]): ComparisonRow[] {
  // Each run's latency is resampled once for all the rows that read it, each run from a seed of its own.
  const samplesByColumn = new Map<keyof SortedLatencies, BootstrapSample[]>();
  const samplesOf = (key: keyof SortedLatencies) => {
    let samples = samplesByColumn.get(key);
    if (!samples) {
      samples = compared.map((run, index) => new BootstrapSample(run.sorted[key], { seed: index + 1 }));
      samplesByColumn.set(key, samples);
    }
    return samples;
  };
  return COMPARE_COLUMNS.flatMap(({ metric, statistic, definition }): ComparisonRow[] => {
    if (!definition.perRequest) return [];
    const samples = samplesOf(sortedColumnOf(metric as DistributionShownIn<'compare'>));
    const results = samples.map((sample, index) =>
      index === 0 ? null : differenceOfSamples(samples[0]!, sample, bootstrapped(statistic)),
    );
    return [
      {
        metric: columnLabel(metric, statistic),
        unit: definition.unit,
        values: compared.map((_run, index) => (index === 0 ? (results[1]?.a ?? null) : results[index]!.b)),
        differences: results.map((result) =>
          result ? { difference: result.difference, ci: result.ci, verdict: result.verdict, note: result.note } : null,
        ),
      },
    ];
  });
}

/** Figures with one value per run and no interval: a run is one window, with no per-request spread to bootstrap. */
function perRunRows(compared: RunWithSummary[]): ComparisonRow[] {
  const row = (metric: string, unit: string, value: (run: RunWithSummary) => number | null | undefined): ComparisonRow => ({
    metric,
    unit,
    values: compared.map((run) => value(run) ?? null),
    differences: compared.map(() => null),
  });
  const share = (fraction: number | null | undefined) => (fraction === null || fraction === undefined ? null : fraction * 100);
  return [
    // A kind's own rate (inputs/s) that no compared run holds is left out, not shown as a row of dashes beside chat runs.
    ...COMPARE_COLUMNS.flatMap(({ metric, statistic, definition }) =>
      definition.perRequest || (KIND_OWN_PARTS.includes(definition.summary.part) && !compared.some((run) => holdsPart(run.summary, metric)))
        ? []
        : [row(columnLabel(metric, statistic), definition.unit, (run) => metricFigure(run.summary, metric, statistic))],
    ),
    row('accepted-task rate', '%', (run) => share(run.summary?.accepted_rate)),
    row('VRAM peak', 'MiB', (run) => run.vramPeakMib),
    row('energy per output token', 'J', (run) => run.summary?.telemetry?.energy?.joules_per_output_token),
    row('decode bandwidth', 'GB/s', (run) => run.summary?.decode_bandwidth?.effective_gb_per_s),
    row('decode bandwidth of peak', '%', (run) => share(run.summary?.decode_bandwidth?.utilization)),
  ];
}

/** Runs side by side, the first the baseline: latency differences with intervals, then the per-run figures. */
export function compareRuns(runs: RunStore, runIds: string[]): Comparison {
  if (runIds.length < 2) throw new AppError(ErrorCode.InvalidInput, 'Pick at least two runs to compare');
  const compared = runIds.map((id) => comparedRun(runs, id));
  const notes: string[] = [];
  if (new Set(compared.map((run) => run.workloadRevision)).size > 1)
    notes.push('The runs used different workload revisions: their requests differ, so differences are not only the server’s.');
  if (compared.some((run) => run.status !== 'completed'))
    notes.push('Some runs did not complete; their figures cover the requests that were stored.');
  const onCpu = compared.filter((run) => run.ranOnCpu);
  if (onCpu.length > 0) {
    const [it, its] = onCpu.length === 1 ? ['it', 'its'] : ['them', 'their'];
    notes.push(
      `${onCpu.map((run) => run.runId.slice(0, 8)).join(', ')} ran on the CPU with nothing offloaded: the GPU memory read during ${it} was not ${its} own, so VRAM peak and the VRAM chart leave ${it} out.`,
    );
  }
  return {
    runs: compared.map(({ summary: _summary, sorted, ranOnCpu: _ranOnCpu, ...run }) => ({
      ...run,
      cdf: Object.fromEntries(CDF_METRICS.map((metric) => [metric, cdfPoints(sorted[sortedColumnOf(metric)])])) as Record<
        CdfMetric,
        number[]
      >,
    })),
    rows: [...latencyRows(compared), ...perRunRows(compared)],
    notes,
  };
}
