import type { EngineInfo } from '../../shared/contract/engine';
import type { ConditionResult, ExperimentResult } from '../../shared/contract/experiments';
import type { ServerProfile } from '../../shared/contract/server';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { runWorkload } from '../runner/run-workload';
import type { ManagedServer } from '../server/managed-server';
import type { ServerManager } from '../server/server-manager';
import type { RequestRow, RunStore } from '../store/run-store';
import type { WorkloadDef } from '../workload/workload-types';
import { conditionVerdicts, summarizeCondition } from './condition-summary';
import type { ExperimentStore } from './experiment-store';
import { windowSchedule } from './windows';

export type WarmColdCondition = 'cold-process' | 'cold-cache' | 'warm-cache';
export const WARM_COLD_CONDITIONS: readonly WarmColdCondition[] = ['cold-process', 'cold-cache', 'warm-cache'];

export interface WarmColdOptions {
  runs: RunStore;
  experiments: ExperimentStore;
  servers: ServerManager;
  engine: () => Promise<EngineInfo>;
  model: { ref: string; path: string };
  workload: { def: WorkloadDef; file: string };
  profile: ServerProfile;
  repeats: number;
  requestsPerWindow: number | null;
  concurrency: number;
  /** Deliberately leave the prompt cache on in cold-cache: the evidence must then flag contamination. */
  skipCacheReset?: boolean;
  signal?: AbortSignal;
  onStatus?: (line: string) => void;
}

/** Requests in one pass over a workload definition, generators included: the priming pass for warm-cache. */
export function definitionItemCount(def: WorkloadDef): number {
  return def.groups.reduce((sum, group) => {
    const written = (group.items ?? []).reduce((n, item) => n + (item.repeat ?? 1), 0);
    const generator = group.generate;
    let generated = 0;
    if (generator && 'synthetic' in generator) generated = generator.synthetic.count;
    else if (generator && 'prefix_families' in generator) generated = generator.prefix_families.prefixes * generator.prefix_families.suffixes;
    else if (generator && 'long_document' in generator) generated = generator.long_document.count;
    else if (generator && 'sharegpt' in generator) generated = generator.sharegpt.limit ?? 16;
    return sum + written + generated;
  }, 0);
}

function firstRequestCached(rows: RequestRow[]): boolean {
  const first = rows.filter((row) => row.warmup === 0).sort((a, b) => a.t0_ms - b.t0_ms)[0];
  return (first?.cached_tokens ?? 0) > 0;
}

/**
 * Warm against cold, proven by the server's own cache evidence:
 * - cold-process: a fresh server per window, measured from its first request;
 * - cold-cache: a running server with the host prompt cache off and `cache_prompt: false`;
 * - warm-cache: a running server whose shared prefixes were primed by one warmup pass.
 */
export async function runWarmCold(options: WarmColdOptions): Promise<ExperimentResult> {
  const protocol = {
    kind: 'warmcold', model: options.model.ref, workload: options.workload.def.name, repeats: options.repeats, concurrency: options.concurrency,
    requests_per_window: options.requestsPerWindow, profile: options.profile, skip_cache_reset: options.skipCacheReset ?? false,
    conditions: {
      'cold-process': 'fresh llama-server per window; no warmup',
      'cold-cache': options.skipCacheReset ? 'running server; cache reset SKIPPED on purpose' : 'running server, --cache-ram 0, cache_prompt: false on every request',
      'warm-cache': 'running server, prompt cache on, one warmup pass over the workload primes the shared prefixes',
    },
  };
  const experimentId = options.experiments.create('warmcold', protocol);
  const runIds = new Map<WarmColdCondition, string[]>(WARM_COLD_CONDITIONS.map((condition) => [condition, []]));
  const coldStarts: number[] = [];
  const longLived = new Map<WarmColdCondition, ManagedServer>();

  const serverFor = async (condition: 'cold-cache' | 'warm-cache') => {
    let server = longLived.get(condition);
    if (!server) {
      const profile = condition === 'cold-cache' && !options.skipCacheReset ? { ...options.profile, cacheRamMib: 0 } : options.profile;
      server = await options.servers.prepare({ modelRef: options.model.ref, profile });
      const ready = await server.start();
      if (ready.state !== 'ready') throw new AppError(ErrorCode.ServerStartFailed, `${condition} server: ${ready.fault?.message}`);
      longLived.set(condition, server);
    }
    return server;
  };

  try {
    for (const { window, condition } of windowSchedule(WARM_COLD_CONDITIONS, options.repeats)) {
      if (options.signal?.aborted) throw new AppError(ErrorCode.RequestFailed, 'cancelled');
      options.onStatus?.(`window ${window + 1}/${options.repeats}: ${condition}`);
      const common = {
        workload: options.workload, load: { mode: 'closed' as const, concurrency: options.concurrency },
        stop: { requests: options.requestsPerWindow, durationMs: null }, slo: null, timeouts: { firstTokenMs: 120_000, totalMs: 600_000 }, private: false, referenceRunId: null, baselineMs: 300,
      };
      let result;
      if (condition === 'cold-process') {
        // No cold-start probe: the first measured request is the first the fresh server sees.
        result = await runWorkload({ request: { ...common, target: { kind: 'model', modelRef: options.model.ref, modelPath: options.model.path, profile: options.profile, coldStartProbe: false }, warmup: 0 }, store: options.runs, servers: options.servers, engine: options.engine, signal: options.signal });
        const server = options.runs.getRun(result.summary.run_id)?.server_json;
        const ready = server ? (JSON.parse(server) as { coldStart?: { spawnToReadyMs?: number } }).coldStart?.spawnToReadyMs : undefined;
        const first = options.runs.requestsForSummary(result.summary.run_id).filter((row) => row.warmup === 0).sort((a, b) => a.t0_ms - b.t0_ms)[0];
        // Spawn → ready, then the first request's own TTFT (the idle telemetry baseline in between is not counted).
        if (typeof ready === 'number' && first?.ttft_ms != null) coldStarts.push(ready + first.ttft_ms);
      } else {
        const server = await serverFor(condition);
        const warmup = condition === 'warm-cache' ? definitionItemCount(options.workload.def) : 0;
        result = await runWorkload({
          request: { ...common, target: { kind: 'server', server, modelRef: options.model.ref, modelPath: options.model.path }, warmup, extraBody: condition === 'cold-cache' && !options.skipCacheReset ? { cache_prompt: false } : undefined },
          store: options.runs, servers: options.servers, engine: options.engine, signal: options.signal,
        });
      }
      runIds.get(condition)!.push(result.summary.run_id);
      options.experiments.addRun(experimentId, result.summary.run_id, condition, window);
    }

    const summaries = WARM_COLD_CONDITIONS.map((condition) => ({ condition, ...summarizeCondition(options.runs, condition, runIds.get(condition)!) }));
    const conditions: ConditionResult[] = summaries.map(({ condition, result, rows }) => {
      const cached = result.evidence.cached_prompt_tokens > 0 || (result.evidence.timings_cache_n_max ?? 0) > 0;
      let reason: string | null = null;
      if (condition === 'cold-cache' && cached) reason = `cold-cache requests reused ${result.evidence.cached_prompt_tokens} cached prompt tokens (timings.cache_n up to ${result.evidence.timings_cache_n_max}): the cache was not cold`;
      if (condition === 'warm-cache' && !cached) reason = 'warm-cache requests reused no cached prompt tokens: the cache was not warm';
      if (condition === 'cold-process' && firstRequestCached(rows)) reason = 'the first request after a fresh start reported cached tokens';
      return { ...result, contaminated: reason !== null, contamination_reason: reason, ...(condition === 'cold-process' ? { cold_start_ms: coldStarts } : {}) };
    });
    const byName = new Map(summaries.map((entry) => [entry.condition, entry]));
    const verdicts = conditionVerdicts([byName.get('cold-cache')!, byName.get('warm-cache')!, byName.get('cold-process')!].map((entry) => ({ name: entry.condition, windows: entry.windows })));
    const warmVsCold = verdicts.find((row) => row.metric === 'ttft_ms p50' && row.b === 'warm-cache');
    const contaminated = conditions.filter((condition) => condition.contaminated);
    const reason = contaminated.length > 0
      ? `Not conclusive: ${contaminated.map((condition) => `${condition.name} is contaminated (${condition.contamination_reason})`).join('; ')}.`
      : warmVsCold?.difference !== null && warmVsCold?.difference !== undefined
        ? `A warm prompt cache changes TTFT p50 by ${warmVsCold.difference.toFixed(2)} ms (95 % CI ${warmVsCold.ci ? `${warmVsCold.ci[0].toFixed(2)} to ${warmVsCold.ci[1].toFixed(2)}` : 'n/a'}): ${warmVsCold.verdict}.`
        : 'Not enough data for a verdict.';
    const result: ExperimentResult = { experiment_id: experimentId, kind: 'warmcold', status: 'completed', protocol, conditions, verdicts, recommendation: { choice: null, reason, excluded: [] } };
    options.experiments.finish(experimentId, 'completed', result);
    return result;
  } catch (error) {
    options.experiments.finish(experimentId, options.signal?.aborted ? 'interrupted' : 'failed', null);
    throw error;
  } finally {
    await Promise.allSettled([...longLived.values()].map((server) => server.stop()));
  }
}
