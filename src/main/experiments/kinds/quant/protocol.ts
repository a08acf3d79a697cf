import type { QuantProtocol } from '../../../../shared/contract/experiment-kinds/quant';
import fs from 'node:fs';
import path from 'node:path';
import type { EngineInfo } from '../../../../shared/contract/engine';
import type { ConditionResult, ExperimentResult } from '../../../../shared/contract/experiments';
import type { ServerProfile } from '../../../../shared/contract/server';
import { EXPERIMENT_DEFAULTS } from '../../../../shared/experiment-defaults';
import { ErrorCode } from '../../../../shared/errors';
import { AppError, throwIfCancelled } from '../../../core/errors';
import { pathExists } from '../../../core/exists';
import { toolPath } from '../../../engines/llamacpp/locate-engine';
import { DEMO_VARIANTS, resolveModelRef } from '../../../models/demo-models';
import type { QuantFile } from '../../../models/quant-files';
import { quantizeModel } from '../../../models/quantize';
import { quantFilesOf } from './quant-files-of';
import type { ServerManager } from '../../../server/server-manager';
import type { RunStore } from '../../../store/run-store';
import type { WorkloadDef } from '../../../workload/workload-types';
import { acceptanceCounts, summarizeCondition, summaryVerdicts } from '../../condition-summary';
import type { ExperimentStore } from '../../../store/experiment-store';
import { measureKld, type KldResult } from '../../kld';
import { openSpeedVerdicts, recommend, type QuantConstraints } from '../../recommend';
import { kldMissingReason, qualityFields, tokenPass, windowsAndPassProtocol, type TokenPassResult } from '../../agreement-pass';
import { openName, runWindowRounds, verdictSettingsOf } from '../../window-rounds';
import { closedWindowRequest, runWindow, settleExperiment } from '../../experiment-inputs';
import type { WindowCooldown } from '../../window-cooldown';

export type { QuantConstraints } from '../../recommend';

/**
 * The file for each quantization of a model: the demo variants by name; for a GGUF path,
 * the file itself when it already is that type, a sibling `<stem>-<type>.gguf`, or one made
 * now with llama-quantize.
 */
export async function resolveQuantFiles(
  baseRef: string,
  quants: string[],
  engine: EngineInfo,
  onStatus?: (line: string) => void,
): Promise<{ name: string; file: string }[]> {
  if (baseRef.startsWith('demo:')) {
    return Promise.all(
      quants.map(async (quant) => {
        const variant = DEMO_VARIANTS.find((candidate) => candidate.ref === `demo:${quant}`);
        if (!variant)
          throw new AppError(
            ErrorCode.InvalidInput,
            `No demo model in ${quant}; the demo models are ${DEMO_VARIANTS.map((v) => v.ref.slice(5)).join(', ')}`,
          );
        return { name: quant, file: await resolveModelRef(variant.ref) };
      }),
    );
  }
  const base = await resolveModelRef(baseRef);
  const results: { name: string; file: string }[] = [];
  for (const { quant, file: sibling } of await quantFilesOf(base, quants)) {
    if (sibling === base) {
      results.push({ name: quant, file: base });
      continue;
    }
    if (!(await pathExists(sibling))) {
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
 * One model in several files (quantizations, or any GGUF files named with `files`), each on
 * a fresh server with the same profile and the same workload: size, load time, VRAM, speed,
 * acceptance; then, untimed, greedy token agreement with the first (baseline) file and KLD /
 * same-top-p from llama-perplexity on an evaluation text.
 */
export async function runQuantExperiment(options: QuantExperimentOptions): Promise<ExperimentResult> {
  const engine = await options.engine();
  const files =
    options.files && options.files.length > 0
      ? options.files
      : await resolveQuantFiles(options.baseRef, options.quants, engine, options.onStatus);
  const kldContext = options.kldContext ?? EXPERIMENT_DEFAULTS.kldContext;
  const protocol: QuantProtocol = {
    kind: 'quant',
    cooldown: options.cooldown?.describe() ?? null,
    base: options.files?.length ? files[0]!.file : options.baseRef,
    quants: options.files?.length ? null : options.quants,
    files,
    ...windowsAndPassProtocol(options),
  };
  const experimentId = options.experiments.create('quant', protocol);
  return settleExperiment(options, experimentId, async () => {
    const { loadMs, vram, stopping, summaries } = await measureQuantWindows(options, experimentId, files);
    const baseline = summaries[0]!;
    const pass = await tokenPass({
      servers: options.servers,
      hashes: options.runs.hashes,
      files,
      profile: options.profile,
      workload: options.workload,
      kldContext,
      signal: options.signal,
      onStatus: options.onStatus,
      kldText: options.kldText === null ? null : { text: options.kldText, source: options.kldTextSource ?? 'named by the user' },
    });
    const { kld, kldMissing } = await measureQuantKld(options, engine, files, baseline.entry.file, pass.evalText, kldContext);
    protocol.kld = {
      context: kldContext,
      text_source: pass.evalText.source,
      text_tokens: pass.evalText.tokens,
      generation: pass.evalText.generation,
      text: pass.evalText.text,
    };
    const mean = (values: number[]) => (values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length);
    const max = (values: number[]) => (values.length === 0 ? null : Math.max(...values));
    const conditions: ConditionResult[] = summaries.map(({ entry, result, rows }) => {
      const memory = vram.get(entry.name)!;
      return {
        ...result,
        file_bytes: fs.statSync(entry.file).size,
        load_ms: mean(loadMs.get(entry.name)!),
        vram: { baseline_mib: mean(memory.baseline), peak_mib: max(memory.peak), server_mib: max(memory.server) },
        ...qualityFields(entry.name, entry === baseline.entry, pass, { results: kld, missing: kldMissing, context: kldContext }),
        acceptance: acceptanceCounts(rows),
      };
    });
    const verdicts = summaryVerdicts(summaries, verdictSettingsOf(stopping));
    const recommendation = recommend(conditions, verdicts, options.constraints);
    const result: ExperimentResult = {
      experiment_id: experimentId,
      kind: 'quant',
      status: 'completed',
      protocol,
      conditions,
      verdicts,
      recommendation,
      stopping,
    };
    return result;
  });
}

type QuantExperimentOptions = {
  runs: RunStore;
  experiments: ExperimentStore;
  servers: ServerManager;
  engine: () => Promise<EngineInfo>;
  baseRef: string;
  quants: string[];
  /** Explicit files, the first the baseline: used instead of baseRef and quants. */
  files?: QuantFile[] | null;
  workload: { def: WorkloadDef; file: string };
  profile: ServerProfile;
  repeats: number;
  /** Run every window rather than stopping once the recommendation's verdicts are decided. */
  fixed?: boolean;
  requestsPerWindow: number | null;
  concurrency: number;
  constraints: QuantConstraints;
  /** The KLD evaluation text the user named; null: one generated by the baseline. */
  kldText: string | null;
  kldTextSource?: string | null;
  kldContext?: number;
  signal?: AbortSignal;
  cooldown?: WindowCooldown | null;
  onStatus?: (line: string) => void;
};

/** Each file's windows in rotated order, with what each window saw of its load time and GPU memory. */
async function measureQuantWindows(options: QuantExperimentOptions, experimentId: string, files: QuantFile[]) {
  const runIds = new Map(files.map((entry) => [entry.name, [] as string[]]));
  const loadMs = new Map(files.map((entry) => [entry.name, [] as number[]]));
  const vram = new Map(files.map((entry) => [entry.name, { baseline: [] as number[], peak: [] as number[], server: [] as number[] }]));
  const summariesSoFar = () => files.map((entry) => ({ entry, ...summarizeCondition(options.runs, entry.name, runIds.get(entry.name)!) }));
  const runOne = async (window: number, condition: QuantFile) => {
    throwIfCancelled(options.signal);
    options.onStatus?.(`window ${window + 1}/${options.repeats}: ${condition.name}`);
    await options.cooldown?.beforeWindow(options.onStatus);
    const { summary } = await runWindow(
      options,
      { experimentId, condition: condition.name, window },
      closedWindowRequest(
        { kind: 'model', modelRef: condition.file, modelPath: condition.file, profile: options.profile },
        options,
        options.constraints.slo,
      ),
    );
    runIds.get(condition.name)!.push(summary.run_id);
    const server = options.runs.getRun(summary.run_id)?.server_json;
    const cold = server ? (JSON.parse(server) as { coldStart?: { spawnToReadyMs?: number } }).coldStart?.spawnToReadyMs : undefined;
    if (typeof cold === 'number') loadMs.get(condition.name)!.push(cold);
    const gpu = summary.telemetry?.gpu;
    if (gpu?.baseline_used_mib != null) vram.get(condition.name)!.baseline.push(gpu.baseline_used_mib);
    if (gpu?.peak_used_mib != null) vram.get(condition.name)!.peak.push(gpu.peak_used_mib);
    if (gpu?.server_used_mib_peak != null) vram.get(condition.name)!.server.push(gpu.server_used_mib_peak);
  };
  const stopping = await runWindowRounds(
    files,
    { repeats: options.repeats, fixed: options.fixed ?? false },
    runOne,
    (settings) => openSpeedVerdicts(summaryVerdicts(summariesSoFar(), settings)).map(openName),
    options.onStatus,
  );
  return { runIds, loadMs, vram, stopping, summaries: summariesSoFar() };
}

/**
 * KL divergence and same-top-p of every file against the baseline's, from llama-perplexity on
 * the evaluation text, and why not when it cannot run.
 */
async function measureQuantKld(
  options: QuantExperimentOptions,
  engine: EngineInfo,
  files: QuantFile[],
  baselineFile: string,
  evalText: TokenPassResult['evalText'],
  kldContext: number,
) {
  const perplexity = toolPath(engine, 'llama-perplexity');
  let kld = new Map<string, KldResult>();
  if (perplexity && evalText.error === null) {
    options.onStatus?.(`measuring KL divergence against ${files[0]!.name} with llama-perplexity at context ${kldContext}`);
    kld = await measureKld({
      perplexityBinary: perplexity,
      baseline: baselineFile,
      candidates: files,
      text: evalText.text,
      tokens: evalText.tokens,
      context: kldContext,
      threads: options.profile.threads,
      signal: options.signal,
    });
  }
  const kldMissing = kldMissingReason(perplexity, evalText);
  return { kld, kldMissing };
}
