import type { ConditionResult, VerdictRow } from '../../shared/contract/experiments';
import type { RunSummary } from '../../shared/contract/runs';
import { windowedBootstrapDifference } from '../metrics/compare';
import { summarizeRun } from '../metrics/run-summary';
import type { RequestRow, RunStore } from '../store/run-store';

/** A condition's measured requests pooled over its windows, with the cache evidence the server gave. */
export function summarizeCondition(store: RunStore, name: string, runIds: string[]): { result: ConditionResult; rows: RequestRow[]; windows: RequestRow[][] } {
  const rows: RequestRow[] = [];
  const windows: RequestRow[][] = [];
  let metricsCached: number | null = null;
  for (const runId of runIds) {
    // With text: agreement and the KLD text need the outputs and prompts.
    const runRows = store.requests(runId);
    windows.push(runRows);
    // Windows are separate runs on separate clocks: shift them end to end so the pooled window spans their sum.
    const offset = rows.length === 0 ? 0 : Math.max(...rows.map((row) => row.end_ms ?? row.t0_ms)) + 1;
    for (const row of runRows) rows.push({ ...row, t0_ms: row.t0_ms + offset, end_ms: row.end_ms === null ? null : row.end_ms + offset, scheduled_ms: row.scheduled_ms === null ? null : row.scheduled_ms + offset });
    const summary = store.getRun(runId)?.summary_json ? (JSON.parse(store.getRun(runId)!.summary_json!) as RunSummary) : null;
    const cached = summary?.telemetry?.server_metrics?.cached_prompt_tokens;
    if (typeof cached === 'number') metricsCached = (metricsCached ?? 0) + cached;
  }
  const summary = summarizeRun({ runId: name, status: 'completed', statusReason: null, workload: { name: null, revision: null }, rows, load: { mode: 'closed' }, slo: null });
  const measured = rows.filter((row) => row.warmup === 0 && row.error_class === null);
  let cacheN: number | null = null;
  for (const row of measured) {
    const timings = row.timings_json ? (JSON.parse(row.timings_json) as { cache_n?: number | null }) : null;
    if (typeof timings?.cache_n === 'number') cacheN = Math.max(cacheN ?? 0, timings.cache_n);
  }
  return {
    rows,
    windows,
    result: {
      name,
      run_ids: runIds,
      metrics: summary.metrics,
      throughput: { requests_per_s: summary.throughput.requests_per_s, output_tokens_per_s: summary.throughput.output_tokens_per_s },
      accepted_rate: summary.accepted_rate,
      requests: { attempted: summary.requests.attempted, completed: summary.requests.completed, failed: summary.requests.failed },
      evidence: { cached_prompt_tokens: summary.cache.cached_prompt_tokens, prompt_tokens: summary.cache.prompt_tokens, timings_cache_n_max: cacheN, metrics_cached_prompt_tokens: metricsCached },
      contaminated: false,
      contamination_reason: null,
    },
  };
}

/**
 * Baseline (first) against every other condition: p50/p95 of TTFT, TPOT, E2E with 95 %
 * intervals from a bootstrap over windows and the requests within them.
 */
export function conditionVerdicts(conditions: { name: string; windows: RequestRow[][] }[]): VerdictRow[] {
  const [baseline, ...others] = conditions;
  if (!baseline) return [];
  const values = (runs: RequestRow[][], key: 'ttft_ms' | 'tpot_ms' | 'e2e_ms') =>
    runs.map((rows) => rows.filter((row) => row.warmup === 0 && row.error_class === null && row[key] !== null).map((row) => row[key]!)).filter((window) => window.length > 0);
  const verdicts: VerdictRow[] = [];
  for (const other of others) {
    for (const key of ['ttft_ms', 'tpot_ms', 'e2e_ms'] as const) {
      for (const statistic of ['p50', 'p95'] as const) {
        const result = windowedBootstrapDifference(values(baseline.windows, key), values(other.windows, key), statistic);
        verdicts.push({ metric: `${key} ${statistic}`, a: baseline.name, b: other.name, a_value: result.a, b_value: result.b, difference: result.difference, ci: result.ci, verdict: result.verdict });
      }
    }
  }
  return verdicts;
}
