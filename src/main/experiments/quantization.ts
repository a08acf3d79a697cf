import fs from 'node:fs';
import path from 'node:path';
import type { EngineInfo } from '../../shared/contract/engine';
import type { ConditionResult, ExperimentResult } from '../../shared/contract/experiments';
import type { SloSpec } from '../../shared/contract/runs';
import type { ServerProfile } from '../../shared/contract/server';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { toolPath } from '../engines/llamacpp/locate-engine';
import { DEMO_VARIANTS, resolveModelRef } from '../models/demo-models';
import { describeModel } from '../models/model-library';
import { quantizeModel } from '../models/quantize';
import { runWorkload } from '../runner/run-workload';
import type { ServerManager } from '../server/server-manager';
import type { RunStore } from '../store/run-store';
import type { WorkloadDef } from '../workload/workload-types';
import { greedyAgreement } from './agreement';
import { conditionVerdicts, summarizeCondition } from './condition-summary';
import type { ExperimentStore } from './experiment-store';
import { measureKld, type KldResult } from './kld';
import { windowSchedule } from './windows';

export interface QuantConstraints {
  vramBudgetMib: number | null;
  minAgreement: number | null;
  minAcceptance: number | null;
  slo: SloSpec | null;
}

/**
 * The file for each quantization of a model: the demo variants by name; for a GGUF path,
 * the file itself when it already is that type, a sibling `<stem>-<type>.gguf`, or one made
 * now with llama-quantize.
 */
export async function resolveQuantFiles(baseRef: string, quants: string[], engine: EngineInfo, onStatus?: (line: string) => void): Promise<{ name: string; file: string }[]> {
  if (baseRef.startsWith('demo:')) {
    return Promise.all(quants.map(async (quant) => {
      const variant = DEMO_VARIANTS.find((candidate) => candidate.ref === `demo:${quant}`);
      if (!variant) throw new AppError(ErrorCode.InvalidInput, `No demo model in ${quant}; the demo models are ${DEMO_VARIANTS.map((v) => v.ref.slice(5)).join(', ')}`);
      return { name: quant, file: await resolveModelRef(variant.ref) };
    }));
  }
  const base = await resolveModelRef(baseRef);
  const baseType = describeModel(base).quantization?.toLowerCase() ?? null;
  const stem = path.basename(base, '.gguf').replace(/[-.](f16|f32|bf16)$/i, '');
  const results: { name: string; file: string }[] = [];
  for (const quant of quants) {
    if (quant === baseType) {
      results.push({ name: quant, file: base });
      continue;
    }
    const sibling = path.join(path.dirname(base), `${stem}-${quant}.gguf`);
    if (!fs.existsSync(sibling)) {
      const binary = toolPath(engine, 'llama-quantize');
      if (!binary) throw new AppError(ErrorCode.EngineMissing, 'llama-quantize is needed to make missing quantizations');
      onStatus?.(`quantizing ${path.basename(base)} to ${quant}`);
      await quantizeModel({ quantizeBinary: binary, source: base, target: sibling, type: quant.toUpperCase() });
    }
    results.push({ name: quant, file: sibling });
  }
  return results;
}

/**
 * One model in several quantizations, each on a fresh server with the same profile and
 * the same workload: size, load time, VRAM, speed, acceptance, greedy agreement with the
 * first (baseline) quantization, and KLD / same-top-p from llama-perplexity.
 */
export async function runQuantExperiment(options: {
  runs: RunStore;
  experiments: ExperimentStore;
  servers: ServerManager;
  engine: () => Promise<EngineInfo>;
  baseRef: string;
  quants: string[];
  workload: { def: WorkloadDef; file: string };
  profile: ServerProfile;
  repeats: number;
  requestsPerWindow: number | null;
  concurrency: number;
  constraints: QuantConstraints;
  kldText: string | null;
  signal?: AbortSignal;
  onStatus?: (line: string) => void;
}): Promise<ExperimentResult> {
  const engine = await options.engine();
  const files = await resolveQuantFiles(options.baseRef, options.quants, engine, options.onStatus);
  const protocol = { kind: 'quant', base: options.baseRef, quants: options.quants, files, workload: options.workload.def.name, repeats: options.repeats, concurrency: options.concurrency, requests_per_window: options.requestsPerWindow, profile: options.profile, constraints: options.constraints };
  const experimentId = options.experiments.create('quant', protocol);
  try {
    const runIds = new Map(files.map((entry) => [entry.name, [] as string[]]));
    const loadMs = new Map(files.map((entry) => [entry.name, [] as number[]]));
    const vram = new Map(files.map((entry) => [entry.name, { baseline: [] as number[], peak: [] as number[], server: [] as number[] }]));
    for (const { window, condition } of windowSchedule(files, options.repeats)) {
      if (options.signal?.aborted) throw new AppError(ErrorCode.RequestFailed, 'cancelled');
      options.onStatus?.(`window ${window + 1}/${options.repeats}: ${condition.name}`);
      const { summary } = await runWorkload({
        request: {
          workload: options.workload, target: { kind: 'model', modelRef: condition.file, modelPath: condition.file, profile: options.profile },
          load: { mode: 'closed', concurrency: options.concurrency }, stop: { requests: options.requestsPerWindow, durationMs: null }, warmup: 0,
          slo: options.constraints.slo, timeouts: { firstTokenMs: 120_000, totalMs: 600_000 }, private: false, referenceRunId: null, baselineMs: 300,
        },
        store: options.runs, servers: options.servers, engine: options.engine, signal: options.signal,
      });
      runIds.get(condition.name)!.push(summary.run_id);
      options.experiments.addRun(experimentId, summary.run_id, condition.name, window);
      const server = options.runs.getRun(summary.run_id)?.server_json;
      const cold = server ? (JSON.parse(server) as { coldStart?: { spawnToReadyMs?: number } }).coldStart?.spawnToReadyMs : undefined;
      if (typeof cold === 'number') loadMs.get(condition.name)!.push(cold);
      const gpu = summary.telemetry?.gpu;
      if (gpu?.baseline_used_mib != null) vram.get(condition.name)!.baseline.push(gpu.baseline_used_mib);
      if (gpu?.peak_used_mib != null) vram.get(condition.name)!.peak.push(gpu.peak_used_mib);
      if (gpu?.server_used_mib_peak != null) vram.get(condition.name)!.server.push(gpu.server_used_mib_peak);
    }

    const summaries = files.map((entry) => ({ entry, ...summarizeCondition(options.runs, entry.name, runIds.get(entry.name)!) }));
    const baseline = summaries[0]!;
    const perplexity = toolPath(engine, 'llama-perplexity');
    let kld = new Map<string, KldResult>();
    if (perplexity) {
      options.onStatus?.('measuring KL divergence against the baseline with llama-perplexity');
      const text = options.kldText ?? baseline.rows.map((row) => row.prompt_text ?? '').join('\n');
      kld = await measureKld({ perplexityBinary: perplexity, baseline: baseline.entry.file, candidates: files, text, threads: options.profile.threads, signal: options.signal });
    }
    const mean = (values: number[]) => (values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length);
    const max = (values: number[]) => (values.length === 0 ? null : Math.max(...values));
    const conditions: ConditionResult[] = summaries.map(({ entry, result, rows }) => {
      const agreement = greedyAgreement(baseline.rows, rows);
      const memory = vram.get(entry.name)!;
      return {
        ...result,
        file_bytes: fs.statSync(entry.file).size,
        load_ms: mean(loadMs.get(entry.name)!),
        vram: { baseline_mib: mean(memory.baseline), peak_mib: max(memory.peak), server_mib: max(memory.server) },
        agreement_with_baseline: agreement.agreement,
        first_divergence_chars_mean: agreement.firstDivergenceMean,
        kld_mean: kld.get(entry.name)?.kldMean ?? null,
        same_top_p: kld.get(entry.name)?.sameTopP ?? null,
        kld_error: perplexity ? (kld.get(entry.name)?.error ?? null) : 'llama-perplexity not found beside the server',
      };
    });
    const verdicts = conditionVerdicts(summaries.map((entry) => ({ name: entry.entry.name, windows: entry.windows })));
    const recommendation = recommend(conditions, verdicts, options.constraints);
    const result: ExperimentResult = { experiment_id: experimentId, kind: 'quant', status: 'completed', protocol, conditions, verdicts, recommendation };
    options.experiments.finish(experimentId, 'completed', result);
    return result;
  } catch (error) {
    options.experiments.finish(experimentId, options.signal?.aborted ? 'interrupted' : 'failed', null);
    throw error;
  }
}

/**
 * Excludes candidates that break a constraint, then prefers the smallest file whose TTFT
 * p50 is not significantly slower than the baseline's; a gain inside the noise keeps the
 * baseline unless the candidate also saves memory.
 */
export function recommend(conditions: ConditionResult[], verdicts: ExperimentResult['verdicts'], constraints: QuantConstraints): ExperimentResult['recommendation'] {
  const excluded: { name: string; reason: string }[] = [];
  const eligible = conditions.filter((condition) => {
    const peak = condition.vram?.peak_mib ?? null;
    if (constraints.vramBudgetMib !== null && peak !== null && peak > constraints.vramBudgetMib) return excluded.push({ name: condition.name, reason: `peak VRAM ${peak} MiB exceeds the ${constraints.vramBudgetMib} MiB budget` }), false;
    if (constraints.minAgreement !== null && (condition.agreement_with_baseline ?? 0) < constraints.minAgreement) return excluded.push({ name: condition.name, reason: `greedy agreement ${((condition.agreement_with_baseline ?? 0) * 100).toFixed(1)} % is below ${(constraints.minAgreement * 100).toFixed(1)} %` }), false;
    if (constraints.minAcceptance !== null && (condition.accepted_rate ?? 0) < constraints.minAcceptance) return excluded.push({ name: condition.name, reason: `accepted-task rate ${((condition.accepted_rate ?? 0) * 100).toFixed(1)} % is below ${(constraints.minAcceptance * 100).toFixed(1)} %` }), false;
    const p95 = condition.metrics.ttft_ms.p95;
    if (constraints.slo?.ttft_ms !== undefined && p95 !== null && p95 > constraints.slo.ttft_ms) return excluded.push({ name: condition.name, reason: `TTFT p95 ${p95.toFixed(1)} ms misses the ${constraints.slo.ttft_ms} ms SLO` }), false;
    return true;
  });
  if (eligible.length === 0) return { choice: null, reason: 'No candidate meets the constraints.', excluded };
  const baseline = conditions[0]!;
  const ttftVerdict = (name: string) => verdicts.find((row) => row.b === name && row.metric === 'ttft_ms p50');
  const notSlower = eligible.filter((condition) => condition === baseline || ttftVerdict(condition.name)?.verdict !== 'slower');
  const pool = notSlower.length > 0 ? notSlower : eligible;
  const choice = [...pool].sort((a, b) => (a.file_bytes ?? 0) - (b.file_bytes ?? 0))[0]!;
  if (choice === baseline) return { choice: choice.name, reason: `Keep the baseline ${baseline.name}: no eligible candidate is both smaller and not slower.`, excluded };
  const verdict = ttftVerdict(choice.name);
  const faster = verdict?.verdict === 'faster';
  return {
    choice: choice.name,
    reason: `${choice.name} is the smallest eligible file (${((choice.file_bytes ?? 0) / 2 ** 20).toFixed(1)} MiB vs ${((baseline.file_bytes ?? 0) / 2 ** 20).toFixed(1)} MiB) and its TTFT p50 is ${faster ? `faster than ${baseline.name} by ${Math.abs(verdict!.difference ?? 0).toFixed(2)} ms` : `not significantly different from ${baseline.name}'s`}; agreement with ${baseline.name} ${choice.agreement_with_baseline === null || choice.agreement_with_baseline === undefined ? 'unknown' : `${(choice.agreement_with_baseline * 100).toFixed(1)} %`}, KLD ${choice.kld_mean ?? '—'}.`,
    excluded,
  };
}
