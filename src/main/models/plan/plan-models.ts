import path from 'node:path';
import type {
  ModelPlan,
  ModelPlanRequest,
  ModelPlanSettings,
  PlannedCandidate,
  PlannedDevice,
  PlanVerdict,
} from '../../../shared/contract/models';
import { readGgufHeaderAsync, readGgufHeaderFrom, type GgufHeader } from '../gguf-reader';
import { isCompanion, scanModels } from '../model-library';
import { checkLoraAdapterHeaders, isLoraAdapterHeader, loraAdapterFacts } from '../lora-adapter';
import { isHubRef, parseHubRef } from '../hub/hub-access';
import { hubByteSource, listHubFiles, openHubSession, type HubOptions } from '../hub/hub-files';
import { chooseCandidates, groupCandidates, quantLabel, type CandidateFiles } from './candidates';
import { planFit, RUNTIME_ALLOWANCE_BYTES, type PlanGpu, type PlanHost } from './fit';
import { estimateMemory } from './memory-estimate';
import { fileWeightBytes, modelShape } from './model-shape';
import { speedCeiling } from './speed-ceiling';

export const PLAN_DEFAULTS: ModelPlanSettings = { contextPerSlot: 4096, parallel: 1, kvType: 'f16', flashAttention: true, ubatch: 512 };

/** The memory a plan fits into, and the bandwidths its ceilings divide by (services/plan-machine.ts reads this machine's). */
export interface PlanMachine {
  gpus: (PlanGpu & { bandwidthSource: string })[];
  host: Omit<PlanHost, 'bandwidthGbPerS'>;
  gpuSource: string;
  /** Measured when a candidate runs on the CPU in part: the read probe takes seconds the first time. */
  hostBandwidth: () => Promise<{ gbPerS: number | null; source: string }>;
}

/** Where the candidates come from: their files, sizes, and a way to read each file's header. */
interface CandidateSource {
  revision: string | null;
  candidates: CandidateFiles[];
  problems: string[];
  sizeOf: (file: string) => number;
  readHeader: (file: string) => Promise<GgufHeader>;
}

/** Header reads from the hub go over the network: a larger budget, a smaller first read, and a few at once. */
const HUB_HEADER_BUDGET_MS = 120_000;
const HUB_FIRST_READ_BYTES = 1 << 20;

async function hubSource(text: string, options: HubOptions): Promise<CandidateSource> {
  const ref = parseHubRef(text);
  const session = openHubSession(options);
  const files = await listHubFiles(ref, session);
  const byPath = new Map(files.map((file) => [file.path, file]));
  const { candidates, problems } = groupCandidates(files.map((file) => file.path));
  return {
    revision: ref.revision,
    candidates,
    problems,
    sizeOf: (file) => byPath.get(file)?.size ?? 0,
    readHeader: (file) =>
      readGgufHeaderFrom(hubByteSource(ref, byPath.get(file)!, session), {
        timeBudgetMs: HUB_HEADER_BUDGET_MS,
        firstReadBytes: HUB_FIRST_READ_BYTES,
      }),
  };
}

async function localSource(target: string): Promise<CandidateSource> {
  const scan = await scanModels([target], { reportMissing: true, withCompanions: true });
  const sizes = new Map<string, number>();
  const candidates: CandidateFiles[] = [];
  const problems = [...scan.problems];
  for (const model of scan.models) {
    // Adapters and projectors beside the models: rows of their own, labelled by their file names, as a hub's are.
    if (isCompanion(model)) {
      sizes.set(model.path, model.sizeBytes);
      candidates.push({ label: path.basename(model.path).replace(/\.gguf$/i, ''), files: [model.path] });
      continue;
    }
    if (!model.valid) {
      problems.push(`${model.path}: ${model.invalidReason}`);
      continue;
    }
    sizes.set(model.path, model.sizeBytes);
    candidates.push({ label: model.quantization ?? quantLabel(path.basename(model.path)), files: model.parts });
  }
  return {
    revision: null,
    candidates,
    problems,
    sizeOf: (file) => sizes.get(file) ?? 0,
    readHeader: (file) => readGgufHeaderAsync(file),
  };
}

const VERDICT_ORDER: Record<PlanVerdict, number> = { fits: 0, partial: 1, cpu: 2, no: 3 };

function sortCandidates(candidates: PlannedCandidate[]): PlannedCandidate[] {
  const rank = (candidate: PlannedCandidate) => (candidate.fit ? VERDICT_ORDER[candidate.fit.verdict] : 4);
  return candidates.sort((a, b) => rank(a) - rank(b) || b.sizeBytes - a.sizeBytes);
}

/** The model adapters are checked against, with its header, when the plan names one. */
export interface PlanBase {
  model: string;
  header: GgufHeader;
}

/** A LoRA adapter among the candidates: its own facts, and whether it fits the base model named; no memory or speed to plan. */
function adapterCandidate(empty: PlannedCandidate, header: GgufHeader, base: PlanBase | null): PlannedCandidate {
  const name = empty.files[0]!;
  try {
    const facts = loraAdapterFacts(name, header);
    let fit: NonNullable<PlannedCandidate['adapter']>['base'] = null;
    if (base) {
      try {
        checkLoraAdapterHeaders(name, header, base.model, base.header);
        fit = { model: base.model, fits: true, problem: null };
      } catch (error) {
        fit = { model: base.model, fits: false, problem: (error as Error).message };
      }
    }
    return { ...empty, architecture: facts.architecture, adapter: { ...facts, base: fit } };
  } catch (error) {
    return { ...empty, problem: (error as Error).message };
  }
}

/** A multimodal projector among the candidates: what it encodes, read from its header; no memory or speed of its own to plan. */
function projectorCandidate(empty: PlannedCandidate, header: GgufHeader): PlannedCandidate {
  const text = (key: string) => {
    const value = header.metadata.get(key);
    return typeof value === 'string' ? value : null;
  };
  return {
    ...empty,
    architecture: 'clip',
    projector: {
      vision: header.metadata.get('clip.has_vision_encoder') === true,
      audio: header.metadata.get('clip.has_audio_encoder') === true,
      projectorType: text('clip.projector_type') ?? text('clip.vision.projector_type') ?? text('clip.audio.projector_type'),
    },
  };
}

async function planCandidate(
  candidate: CandidateFiles,
  source: CandidateSource,
  settings: ModelPlanSettings,
  machine: PlanMachine,
  base: PlanBase | null,
): Promise<PlannedCandidate> {
  const sizeBytes = candidate.files.reduce((sum, file) => sum + source.sizeOf(file), 0);
  const empty = {
    label: candidate.label,
    files: candidate.files,
    sizeBytes,
    architecture: null,
    parameterCount: null,
    contextTrain: null,
    memory: null,
    fit: null,
    ceiling: null,
    ceilingReason: null,
    measured: null,
  };
  let headers: GgufHeader[];
  try {
    headers = await Promise.all(candidate.files.map((file) => source.readHeader(file)));
  } catch (error) {
    return { ...empty, problem: (error as Error).message };
  }
  if (isLoraAdapterHeader(headers[0]!)) return adapterCandidate({ ...empty, problem: null }, headers[0]!, base);
  if (headers[0]!.metadata.get('general.architecture') === 'clip') return projectorCandidate({ ...empty, problem: null }, headers[0]!);
  const shape = modelShape(headers);
  if ('reason' in shape) return { ...empty, problem: shape.reason };
  const estimate = estimateMemory(shape, settings);
  // Where the layers go does not depend on bandwidth; the host's is measured only when some of them are read there.
  const fit = planFit(shape, settings, machine.gpus, machine.host);
  const hostBandwidth = fit.verdict === 'partial' || fit.verdict === 'cpu' ? await machine.hostBandwidth() : { gbPerS: null, source: '' };
  const host: PlanHost = { ...machine.host, bandwidthGbPerS: hostBandwidth.gbPerS };
  const ceiling = speedCeiling(shape, fit, machine.gpus, host);
  return {
    ...empty,
    architecture: shape.architecture,
    parameterCount: shape.parameterCount,
    contextTrain: shape.contextTrain,
    sizeBytes: sizeBytes || fileWeightBytes(shape),
    memory: {
      offloadableBytes: estimate.offloadableBytes,
      hostWeightBytes: estimate.hostWeightBytes,
      kvBytes: estimate.kvBytes,
      computeBytes: estimate.computeBytes,
      allowanceBytes: machine.gpus.length > 0 ? RUNTIME_ALLOWANCE_BYTES : 0,
      notes: estimate.notes,
    },
    fit,
    ceiling: 'reason' in ceiling ? null : ceiling,
    ceilingReason: 'reason' in ceiling ? ceiling.reason : null,
    problem: null,
  };
}

function devicesOf(machine: PlanMachine, hostBandwidth: { gbPerS: number | null; source: string } | null): PlannedDevice[] {
  return [
    ...machine.gpus.map((gpu): PlannedDevice => ({
      kind: 'gpu',
      name: `GPU ${gpu.index}: ${gpu.name}`,
      totalBytes: gpu.totalBytes,
      freeBytes: gpu.freeBytes,
      bandwidthGbPerS: gpu.bandwidthGbPerS,
      bandwidthSource: gpu.bandwidthSource,
    })),
    {
      kind: 'host',
      name: 'host RAM',
      totalBytes: machine.host.totalBytes,
      freeBytes: machine.host.availableBytes,
      bandwidthGbPerS: hostBandwidth?.gbPerS ?? null,
      bandwidthSource: hostBandwidth?.source || 'not measured: no candidate runs on the CPU',
    },
  ];
}

/** Settings from a request, defaults filled in (the RPC schema and the CLI flags check the bounds). */
export function planSettings(request: ModelPlanRequest): ModelPlanSettings {
  return {
    contextPerSlot: request.contextPerSlot ?? PLAN_DEFAULTS.contextPerSlot,
    parallel: request.parallel ?? PLAN_DEFAULTS.parallel,
    kvType: request.kvType ?? PLAN_DEFAULTS.kvType,
    flashAttention: request.flashAttention ?? PLAN_DEFAULTS.flashAttention,
    ubatch: PLAN_DEFAULTS.ubatch,
  };
}

/**
 * For each candidate GGUF of a hub repository or a local folder: the memory a server needs
 * at these settings, whether it fits this machine's GPUs, and the decode-speed ceiling.
 * Hub files are read by HTTP range, a few MiB each, never downloaded.
 */
/** A model file's newest measured decode (RunStore.latestDecodeOf), for a plan of local files. */
export type LatestDecode = (
  modelPath: string,
) => { id: string; started_at: string; tpot_ms_mean: number; decode_sequences: number | null } | undefined;

function withMeasured(candidate: PlannedCandidate, latestDecodeOf: LatestDecode): PlannedCandidate {
  const run = latestDecodeOf(candidate.files[0]!);
  if (!run) return candidate;
  const tokensPerS = 1000 / run.tpot_ms_mean;
  return {
    ...candidate,
    measured: {
      runId: run.id,
      startedAt: run.started_at,
      tokensPerS,
      decodeSequences: run.decode_sequences,
      ofCeiling: candidate.ceiling ? tokensPerS / candidate.ceiling.tokensPerS : null,
    },
  };
}

export async function planModels(
  request: ModelPlanRequest,
  machine: PlanMachine,
  options: HubOptions & { latestDecodeOf?: LatestDecode; base?: PlanBase | null } = {},
): Promise<ModelPlan> {
  const settings = planSettings(request);
  const source = isHubRef(request.source) ? await hubSource(request.source, options) : await localSource(request.source);
  const { chosen, unmatched } = chooseCandidates(source.candidates, request.quants ?? []);
  const problems = [...source.problems];
  if (unmatched.length > 0)
    problems.push(
      `no ${unmatched.join(', ')} in ${request.source}; it has ${source.candidates.map((candidate) => candidate.label).join(', ') || 'no GGUF files'}`,
    );
  const planned: PlannedCandidate[] = [];
  // A few header reads at once: enough to hide the hub's latency, few enough not to crowd the link.
  for (let start = 0; start < chosen.length; start += 4)
    planned.push(
      ...(await Promise.all(
        chosen.slice(start, start + 4).map((candidate) => planCandidate(candidate, source, settings, machine, options.base ?? null)),
      )),
    );
  const measured =
    !isHubRef(request.source) && options.latestDecodeOf
      ? planned.map((candidate) => withMeasured(candidate, options.latestDecodeOf!))
      : planned;
  const hostUsed = planned.some((candidate) => candidate.fit?.verdict === 'partial' || candidate.fit?.verdict === 'cpu');
  return {
    source: request.source,
    revision: source.revision,
    settings,
    devices: devicesOf(machine, hostUsed ? await machine.hostBandwidth() : null),
    gpuSource: machine.gpuSource,
    candidates: sortCandidates(measured),
    problems,
  };
}
