import type { EngineInfo } from '../../shared/contract/engine';
import type { ConditionResult, ExperimentResult } from '../../shared/contract/experiments';
import type { SloSpec } from '../../shared/contract/runs';
import type { ServerProfile } from '../../shared/contract/server';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { runWorkload } from '../runner/run-workload';
import type { ServerManager } from '../server/server-manager';
import { applySettings, assertValidProfile } from '../server/profiles';
import type { RunStore } from '../store/run-store';
import type { WorkloadDef } from '../workload/workload-types';
import { conditionVerdicts, summarizeCondition } from './condition-summary';
import type { ExperimentStore } from './experiment-store';

/** Points not dominated by another: no other has both more throughput and a lower p95 TTFT. */
export function paretoSet(points: { name: string; throughput: number | null; ttftP95: number | null }[]): Set<string> {
  const valid = points.filter((point) => point.throughput !== null && point.ttftP95 !== null);
  return new Set(valid.filter((point) => !valid.some((other) => other !== point && other.throughput! >= point.throughput! && other.ttftP95! <= point.ttftP95! && (other.throughput! > point.throughput! || other.ttftP95! < point.ttftP95!))).map((point) => point.name));
}

/**
 * One server setting varied across values, each value on a fresh server, times load levels:
 * throughput against p95 TTFT with the Pareto set marked, and goodput under the SLOs.
 */
export async function runSweep(options: {
  runs: RunStore;
  experiments: ExperimentStore;
  servers: ServerManager;
  engine: () => Promise<EngineInfo>;
  model: { ref: string; path: string };
  workload: { def: WorkloadDef; file: string };
  profile: ServerProfile;
  vary: { field: string; values: string[] };
  concurrencies: number[];
  requestsPerCondition: number | null;
  slo: SloSpec | null;
  signal?: AbortSignal;
  onStatus?: (line: string) => void;
}): Promise<ExperimentResult> {
  const profiles = options.vary.values.map((value) => {
    const profile = applySettings(options.profile, [`${options.vary.field}=${value}`]);
    assertValidProfile(profile);
    return { value, profile };
  });
  const protocol = { kind: 'sweep', model: options.model.ref, workload: options.workload.def.name, vary: options.vary, concurrency: options.concurrencies, requests_per_condition: options.requestsPerCondition, slo: options.slo, profile: options.profile };
  const experimentId = options.experiments.create('sweep', protocol);
  const conditions: { name: string; runId: string; value: string; concurrency: number; goodput: number | null }[] = [];
  try {
    for (const { value, profile } of profiles) {
      const server = await options.servers.prepare({ modelRef: options.model.ref, profile });
      try {
        const ready = await server.start();
        if (ready.state !== 'ready') throw new AppError(ErrorCode.ServerStartFailed, `${options.vary.field}=${value}: ${ready.fault?.message}`);
        for (const concurrency of options.concurrencies) {
          if (options.signal?.aborted) throw new AppError(ErrorCode.RequestFailed, 'cancelled');
          const name = `${options.vary.field}=${value} @ c=${concurrency}`;
          options.onStatus?.(name);
          const { summary } = await runWorkload({
            request: {
              workload: options.workload, target: { kind: 'server', server, modelRef: options.model.ref, modelPath: options.model.path },
              load: { mode: 'closed', concurrency }, stop: { requests: options.requestsPerCondition, durationMs: null }, warmup: Math.min(concurrency, 4),
              slo: options.slo, timeouts: { firstTokenMs: 120_000, totalMs: 600_000 }, private: false, referenceRunId: null, baselineMs: 300,
            },
            store: options.runs, servers: options.servers, engine: options.engine, signal: options.signal,
          });
          options.experiments.addRun(experimentId, summary.run_id, name, 0);
          conditions.push({ name, runId: summary.run_id, value, concurrency, goodput: summary.goodput.requests_per_s });
        }
      } finally {
        await server.stop();
      }
    }
    const summaries = conditions.map((condition) => ({ condition, ...summarizeCondition(options.runs, condition.name, [condition.runId]) }));
    const pareto = paretoSet(summaries.map(({ condition, result }) => ({ name: condition.name, throughput: result.throughput.output_tokens_per_s, ttftP95: result.metrics.ttft_ms.p95 })));
    const results: ConditionResult[] = summaries.map(({ condition, result }) => ({
      ...result,
      setting: { field: options.vary.field, value: condition.value },
      concurrency: condition.concurrency,
      goodput_requests_per_s: condition.goodput,
      ttft_p95_ms: result.metrics.ttft_ms.p95,
      pareto: pareto.has(condition.name),
    }));
    const verdicts = conditionVerdicts(summaries.map((entry) => ({ name: entry.condition.name, windows: entry.windows })));
    const best = [...results].filter((result) => result.pareto).sort((a, b) => (b.goodput_requests_per_s ?? 0) - (a.goodput_requests_per_s ?? 0))[0];
    const result: ExperimentResult = {
      experiment_id: experimentId, kind: 'sweep', status: 'completed', protocol, conditions: results, verdicts,
      recommendation: best
        ? { choice: best.name, reason: `${best.name} is on the Pareto front of output throughput against p95 TTFT with the highest goodput${options.slo ? ' under the SLOs' : ''} (${best.goodput_requests_per_s?.toFixed(2)} req/s).`, excluded: [] }
        : { choice: null, reason: 'No condition produced both throughput and TTFT figures.', excluded: [] },
    };
    options.experiments.finish(experimentId, 'completed', result);
    return result;
  } catch (error) {
    options.experiments.finish(experimentId, options.signal?.aborted ? 'interrupted' : 'failed', null);
    throw error;
  }
}
