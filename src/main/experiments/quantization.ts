import fs from 'node:fs';
import path from 'node:path';
import type { EngineInfo } from '../../shared/contract/engine';
import type { ConditionResult, ExperimentResult, TokenAgreement } from '../../shared/contract/experiments';
import type { ServerProfile } from '../../shared/contract/server';
import { EXPERIMENT_DEFAULTS } from '../../shared/experiment-defaults';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import type { ServerAddress } from '../core/server-address';
import { userCacheDir } from '../core/paths';
import { toolPath } from '../engines/llamacpp/locate-engine';
import { DEMO_VARIANTS, resolveModelRef } from '../models/demo-models';
import { describeModel } from '../models/model-library';
import type { QuantFile } from '../models/quant-files';
import { quantizedFileName, quantizeModel } from '../models/quantize';
import type { ServerManager } from '../server/server-manager';
import type { RequestRow, RunStore } from '../store/run-store';
import type { WorkloadDef } from '../workload/workload-types';
import { tokenAgreement } from './agreement';
import { conditionVerdicts, summarizeCondition } from './condition-summary';
import type { ExperimentStore } from '../store/experiment-store';
import { measureKld, type KldResult } from './kld';
import { recommend, type QuantConstraints } from './recommend';
import {
  collectTokens,
  countTokens,
  EVAL_TEXT_PROMPT,
  EVAL_TEXT_SAMPLING,
  evalTextCache,
  generateEvalText,
  passItems,
  startPassServer,
  TOKEN_PASS_SEED,
  vocabularyProbe,
} from './token-pass';
import { windowSchedule } from './windows';
import { runWindow, settleExperiment } from './experiment-inputs';
import type { WindowCooldown } from './window-cooldown';

export type { QuantConstraints } from './recommend';

/** Where each quantization of a GGUF file is read from or written to: the file itself when it already is that type, else its sibling `<stem>-<type>.gguf`. */
export function quantFilesOf(base: string, quants: readonly string[]): { quant: string; file: string }[] {
  const baseType = describeModel(base).quantization?.toLowerCase() ?? null;
  return quants.map((quant) => ({
    quant,
    file: quant === baseType ? base : path.join(path.dirname(base), quantizedFileName(base, quant)),
  }));
}

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
  for (const { quant, file: sibling } of quantFilesOf(base, quants)) {
    if (sibling === base) {
      results.push({ name: quant, file: base });
      continue;
    }
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

interface TokenPassResult {
  agreement: Map<string, TokenAgreement>;
  noiseFloor: TokenAgreement | null;
  evalText: { text: string; source: string; tokens: number | null; generation: Record<string, unknown> | null; error: string | null };
}

const failedAgreement = (error: string): TokenAgreement => ({
  mean: null,
  exact_match_rate: null,
  first_divergence_index_mean: null,
  items: 0,
  error,
});

/**
 * The untimed pass after the timed windows: each file on a server of its own, greedy token
 * ids for every workload item (the baseline twice, for the noise floor), and from the
 * baseline the KLD evaluation text and its token count. A failure costs the figures of the
 * file it hit, not the experiment.
 */
async function tokenPass(options: {
  servers: ServerManager;
  hashes: { hash(file: string): Promise<string> };
  files: QuantFile[];
  profile: ServerProfile;
  workload: { def: WorkloadDef; file: string };
  kldText: { text: string; source: string } | null;
  kldContext: number;
  signal?: AbortSignal;
  onStatus?: (line: string) => void;
}): Promise<TokenPassResult> {
  const [baselineFile, ...others] = options.files;
  const agreement = new Map<string, TokenAgreement>();
  let noiseFloor: TokenAgreement | null = null;
  let evalText: TokenPassResult['evalText'] = options.kldText
    ? { text: options.kldText.text, source: options.kldText.source, tokens: null, generation: null, error: null }
    : { text: '', source: 'generated by the baseline', tokens: null, generation: null, error: "the baseline's token pass did not run" };
  let baseTokens: Map<string, number[]> | null = null;
  let items: Awaited<ReturnType<typeof passItems>> = [];
  let baseProbe: number[] | null = null;
  const probe = (server: ServerAddress) => vocabularyProbe(server, options.signal);

  options.onStatus?.(`token pass: ${baselineFile!.name} (twice), and the KLD evaluation text`);
  // Both baseline passes share one server: with the prompt cache off, each request starts from
  // an empty slot, so what differs between them is the engine's own run-to-run nondeterminism.
  try {
    const server = await startPassServer(options.servers, baselineFile!.file, options.profile);
    try {
      items = await passItems(server.address, options.workload);
      baseTokens = await collectTokens(server.address, items, options.signal);
      noiseFloor = tokenAgreement(baseTokens, await collectTokens(server.address, items, options.signal));
      agreement.set(baselineFile!.name, tokenAgreement(baseTokens, baseTokens));
      baseProbe = await probe(server.address);
      try {
        if (!options.kldText) {
          // Two chunks and a quarter: the minimum llama-perplexity takes, and a margin.
          const minTokens = Math.ceil(options.kldContext * 2.25);
          const cache = evalTextCache(path.join(userCacheDir(), 'kld-texts'), await options.hashes.hash(baselineFile!.file), minTokens);
          const cached = cache.read();
          const generated =
            cached === null ? await generateEvalText(server.address, minTokens, server.contextPerSlot, options.signal) : null;
          if (generated) cache.write(generated.text);
          evalText = {
            text: cached ?? generated!.text,
            source: 'generated by the baseline',
            tokens: null,
            generation: {
              prompt: EVAL_TEXT_PROMPT,
              min_tokens: minTokens,
              ...EVAL_TEXT_SAMPLING,
              ignore_eos: true,
              reused: cached !== null,
            },
            error: null,
          };
        }
        evalText.tokens = await countTokens(server.address, evalText.text, options.signal);
      } catch (error) {
        if (options.signal?.aborted) throw error;
        // A user's text can still be scored without a count: llama-perplexity says when it is too short.
        if (!options.kldText) evalText.error = `generating the evaluation text failed: ${(error as Error).message}`;
      }
    } finally {
      await server.stop();
    }
  } catch (error) {
    if (options.signal?.aborted) throw error;
    const message = `the baseline's token pass failed: ${(error as Error).message}`;
    for (const file of options.files) agreement.set(file.name, failedAgreement(message));
    if (!options.kldText) evalText.error = message;
    return { agreement, noiseFloor, evalText };
  }

  for (const file of others) {
    options.onStatus?.(`token pass: ${file.name}`);
    try {
      const server = await startPassServer(options.servers, file.file, options.profile);
      try {
        const own = await probe(server.address);
        if (JSON.stringify(own) !== JSON.stringify(baseProbe)) {
          agreement.set(
            file.name,
            failedAgreement(`${file.name} tokenizes differently from ${baselineFile!.name}: token ids are not comparable`),
          );
          continue;
        }
        agreement.set(file.name, tokenAgreement(baseTokens, await collectTokens(server.address, items, options.signal)));
      } finally {
        await server.stop();
      }
    } catch (error) {
      if (options.signal?.aborted) throw error;
      agreement.set(file.name, failedAgreement(`the token pass failed: ${(error as Error).message}`));
    }
  }
  return { agreement, noiseFloor, evalText };
}

/** Accepted of judged: requests with checks, and failed requests, which accepted nothing. */
function acceptanceCounts(rows: RequestRow[]): { accepted: number; judged: number } {
  const measured = rows.filter((row) => row.warmup === 0);
  const judged = measured.filter((row) => row.accepted !== null || row.error_class !== null);
  return { accepted: judged.filter((row) => row.error_class === null && row.accepted === 1).length, judged: judged.length };
}

/**
 * One model in several files (quantizations, or any GGUF files named with `files`), each on
 * a fresh server with the same profile and the same workload: size, load time, VRAM, speed,
 * acceptance; then, untimed, greedy token agreement with the first (baseline) file and KLD /
 * same-top-p from llama-perplexity on an evaluation text.
 */
export async function runQuantExperiment(options: {
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
}): Promise<ExperimentResult> {
  const engine = await options.engine();
  const files =
    options.files && options.files.length > 0
      ? options.files
      : await resolveQuantFiles(options.baseRef, options.quants, engine, options.onStatus);
  const kldContext = options.kldContext ?? EXPERIMENT_DEFAULTS.kldContext;
  const protocol: Record<string, unknown> = {
    kind: 'quant',
    cooldown: options.cooldown?.describe() ?? null,
    base: options.files?.length ? files[0]!.file : options.baseRef,
    quants: options.files?.length ? null : options.quants,
    files,
    workload: options.workload.def.name,
    repeats: options.repeats,
    concurrency: options.concurrency,
    requests_per_window: options.requestsPerWindow,
    profile: options.profile,
    constraints: options.constraints,
    token_pass: { endpoint: '/completion', temperature: 0, seed: TOKEN_PASS_SEED, cache_prompt: false, chat_template: '/apply-template' },
  };
  const experimentId = options.experiments.create('quant', protocol);
  return settleExperiment(options, experimentId, async () => {
    const runIds = new Map(files.map((entry) => [entry.name, [] as string[]]));
    const loadMs = new Map(files.map((entry) => [entry.name, [] as number[]]));
    const vram = new Map(files.map((entry) => [entry.name, { baseline: [] as number[], peak: [] as number[], server: [] as number[] }]));
    for (const { window, condition } of windowSchedule(files, options.repeats)) {
      if (options.signal?.aborted) throw new AppError(ErrorCode.RequestFailed, 'cancelled');
      options.onStatus?.(`window ${window + 1}/${options.repeats}: ${condition.name}`);
      await options.cooldown?.beforeWindow(options.onStatus);
      const { summary } = await runWindow(
        options,
        { experimentId, condition: condition.name, window },
        {
          target: { kind: 'model', modelRef: condition.file, modelPath: condition.file, profile: options.profile },
          load: { mode: 'closed', concurrency: options.concurrency },
          stop: { requests: options.requestsPerWindow, durationMs: null },
          warmup: 0,
          slo: options.constraints.slo,
        },
      );
      runIds.get(condition.name)!.push(summary.run_id);
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
    const perplexity = toolPath(engine, 'llama-perplexity');
    let kld = new Map<string, KldResult>();
    if (perplexity && pass.evalText.error === null) {
      options.onStatus?.(`measuring KL divergence against ${baseline.entry.name} with llama-perplexity at context ${kldContext}`);
      kld = await measureKld({
        perplexityBinary: perplexity,
        baseline: baseline.entry.file,
        candidates: files,
        text: pass.evalText.text,
        tokens: pass.evalText.tokens,
        context: kldContext,
        threads: options.profile.threads,
        signal: options.signal,
      });
    }
    const kldMissing = !perplexity
      ? 'llama-perplexity not found beside the server'
      : pass.evalText.error !== null
        ? `no evaluation text: ${pass.evalText.error}`
        : 'not measured';
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
      const agreement = pass.agreement.get(entry.name) ?? failedAgreement('the token pass did not run');
      const measuredKld = kld.get(entry.name);
      return {
        ...result,
        file_bytes: fs.statSync(entry.file).size,
        load_ms: mean(loadMs.get(entry.name)!),
        vram: { baseline_mib: mean(memory.baseline), peak_mib: max(memory.peak), server_mib: max(memory.server) },
        agreement_with_baseline: agreement.mean,
        first_divergence_chars_mean: null,
        token_agreement: agreement,
        ...(entry === baseline.entry
          ? { token_agreement_noise_floor: pass.noiseFloor ?? failedAgreement("the baseline's token pass did not run") }
          : {}),
        acceptance: acceptanceCounts(rows),
        kld_mean: measuredKld?.kldMean ?? null,
        same_top_p: measuredKld?.sameTopP ?? null,
        kld_error: measuredKld ? (measuredKld.error ?? null) : kldMissing,
        kld_tokens: pass.evalText.tokens,
        kld_context: kldContext,
      };
    });
    const verdicts = conditionVerdicts(
      summaries.map((entry) => ({
        name: entry.entry.name,
        windows: entry.windows,
        contaminated: entry.result.contaminated ? entry.result.contamination_reason : null,
      })),
    );
    const recommendation = recommend(conditions, verdicts, options.constraints);
    const result: ExperimentResult = {
      experiment_id: experimentId,
      kind: 'quant',
      status: 'completed',
      protocol,
      conditions,
      verdicts,
      recommendation,
    };
    return result;
  });
}
