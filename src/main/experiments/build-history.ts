import type { HistoryBuild, HistoryConfiguration, HistoryRun, MetricHistory, MetricSpec } from '../../shared/contract/history';
import { PERCENTILE_MIN_N } from '../../shared/experiment-defaults';
import { percentile } from '../metrics/distribution';
import type { Db } from '../store/database';
import {
  configurationKey,
  describeLoad,
  engineBuildOf,
  isRecord,
  manifestFacts,
  matchingRuns,
  parseJson,
  type HistoryRunRow,
} from '../store/run-history';
import type { RunStore } from '../store/run-store';
import { meanOverWindows } from './condition-summary';
import { METRIC_TABLE } from '../../shared/metric-table';

const EMPTY_HINT =
  'Run the same workload on the same model with another build to see a history: inferlab check --baseline RUN --engine PATH, or inferlab run with the same --workload, --model, profile and load after updating llama.cpp.';

/** A run's latency columns, each sorted with its nulls left out (`RunStore.sortedLatencyColumns`). */
type SortedLatencies = { ttft_ms: Float64Array; tpot_ms: Float64Array; e2e_ms: Float64Array };

/** A run's own statistic of the metric, over its successful measured requests, with the reason when it has none. */
export function runStatistic(
  spec: MetricSpec,
  latencies: SortedLatencies | null,
  summaryJson: string | null,
): Omit<HistoryRun, 'runId' | 'startedAt'> {
  if (spec.metric === 'output_tokens_per_s') {
    const summary = parseJson(summaryJson);
    const throughput = isRecord(summary) && isRecord(summary.throughput) ? summary.throughput.output_tokens_per_s : null;
    return typeof throughput === 'number' && Number.isFinite(throughput)
      ? { value: throughput, requests: null, note: null }
      : { value: null, requests: null, note: 'the run summary has no output throughput' };
  }
  const metric = spec.metric;
  const values = latencies?.[metric] ?? new Float64Array(0);
  const n = values.length;
  if (n === 0) return { value: null, requests: 0, note: `no successful measured request has ${metric}` };
  const statistic = spec.statistic ?? 'p50';
  const needed = PERCENTILE_MIN_N[statistic];
  if (n < needed) return { value: null, requests: n, note: `${n} successful measured requests; ${statistic} needs at least ${needed}` };
  return { value: percentile(values, statistic === 'p50' ? 0.5 : 0.95), requests: n, note: null };
}

function intervalNote(withValues: number): string | null {
  if (withValues >= 2) return null;
  return withValues === 1 ? 'one run: an interval needs two or more' : 'no run has a value';
}

/** Builds in order of their first run, each with its runs, mean and 95 % t interval, and the change against the first build. */
export function buildsOf(runs: readonly (HistoryRun & { engine_json: string | null })[]): HistoryBuild[] {
  const builds = new Map<string, HistoryBuild>();
  for (const { engine_json, ...run } of [...runs].sort((a, b) => a.startedAt.localeCompare(b.startedAt))) {
    const identity = engineBuildOf(engine_json);
    const build = builds.get(identity.build) ?? {
      ...identity,
      firstStartedAt: run.startedAt,
      runs: [],
      mean: null,
      interval: null,
      intervalNote: null,
      changePercent: null,
    };
    build.runs.push(run);
    builds.set(identity.build, build);
  }
  const ordered = [...builds.values()];
  for (const build of ordered) {
    const { mean, ci, windows } = meanOverWindows(build.runs.map((run) => run.value));
    build.mean = mean;
    build.interval = ci;
    build.intervalNote = intervalNote(windows);
  }
  const first = ordered[0]?.mean ?? null;
  for (const build of ordered.slice(1))
    build.changePercent = first === null || first === 0 || build.mean === null ? null : ((build.mean - first) / first) * 100;
  return ordered;
}

export interface HistoryFilter {
  metric: MetricSpec['metric'];
  statistic: MetricSpec['statistic'];
  /** A model file's SHA-256, or the model reference or path. */
  model?: string | null;
  /** A workload revision or name. */
  workload?: string | null;
  key?: string | null;
}

/**
 * A metric across engine builds, for each comparable configuration apart: completed runs only,
 * never averaged across configurations (a different load or profile is a different experiment).
 */
export function metricHistory(store: { db: Db; runs: RunStore }, filter: HistoryFilter): MetricHistory {
  const spec: MetricSpec = {
    metric: filter.metric,
    statistic: filter.metric === 'output_tokens_per_s' ? null : (filter.statistic ?? 'p50'),
  };
  const rows = matchingRuns(store.db, filter);
  const inScope = filter.key ? rows.filter((row) => configurationKey(row) === filter.key) : rows;
  const completed = inScope.filter((row) => row.status === 'completed');
  const groups = new Map<string, { first: HistoryRunRow; runs: (HistoryRun & { engine_json: string | null })[] }>();
  for (const row of completed) {
    const key = configurationKey(row);
    const group = groups.get(key) ?? { first: row, runs: [] };
    const latencies = spec.metric === 'output_tokens_per_s' ? null : store.runs.sortedLatencyColumns(row.id);
    group.runs.push({
      runId: row.id,
      startedAt: row.started_at,
      engine_json: row.engine_json,
      ...runStatistic(spec, latencies, row.summary_json),
    });
    groups.set(key, group);
  }
  const configurations: HistoryConfiguration[] = [...groups.entries()]
    .map(([key, { first, runs }]) => ({
      key,
      model: { sha256: first.model_sha256, ref: first.model_ref },
      workload: { name: first.workload_name, revision: first.workload_revision },
      load: describeLoad(manifestFacts(first.manifest_json).load),
      profileName: manifestFacts(first.manifest_json).profileName,
      builds: buildsOf(runs),
    }))
    .sort((a, b) => runCount(b) - runCount(a));
  return {
    metric: spec.metric,
    statistic: spec.statistic,
    unit: METRIC_TABLE[spec.metric].unit,
    higherIsBetter: METRIC_TABLE[spec.metric].higherIsBetter,
    configurations,
    notes: historyNotes(configurations, inScope.length - completed.length, filter),
  };
}

const runCount = (configuration: HistoryConfiguration) => configuration.builds.reduce((sum, build) => sum + build.runs.length, 0);

function historyNotes(configurations: HistoryConfiguration[], unfinished: number, filter: HistoryFilter): string[] {
  const notes: string[] = [];
  if (configurations.length === 0)
    notes.push(
      filter.key ? `No completed run has the configuration ${filter.key}. ${EMPTY_HINT}` : `No completed run matches. ${EMPTY_HINT}`,
    );
  else if (configurations.length > 1)
    notes.push(
      `${configurations.length} configurations (model file, workload revision, server profile or load differ): each is shown apart, never averaged together.`,
    );
  else if (configurations[0]!.builds.length === 1) notes.push(`Only one engine build so far. ${EMPTY_HINT}`);
  if (unfinished > 0) notes.push(`${unfinished} matching run(s) that did not complete are left out.`);
  return notes;
}
