import type { ModelPlan, ModelPlanRequest, PlannedCandidate } from '../../shared/contract/models';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { formatTable } from './format';
import { memorySize } from '../../shared/memory-size';
import { projectorEncodes } from '../../shared/projector-encodes';
import { quantsFlag } from './args';
import { PLAN_USAGE } from './usage';

const KV_TYPES = ['f16', 'q8_0', 'q4_0'] as const;

function integerFlag(name: string, raw: string | undefined, min: number, max: number): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max)
    throw new AppError(ErrorCode.Usage, `--${name} must be a whole number from ${min} to ${max}, got "${raw}"\n\nUsage: ${PLAN_USAGE}`);
  return value;
}

export function planRequestFromFlags(
  source: string,
  values: { quants?: string; ctx?: string; parallel?: string; kv?: string; 'no-flash-attn'?: boolean; for?: string },
): ModelPlanRequest {
  const chosen = quantsFlag(values.quants, PLAN_USAGE);
  const quants = chosen === 'all' ? [] : chosen;
  if (values.kv !== undefined && !(KV_TYPES as readonly string[]).includes(values.kv))
    throw new AppError(ErrorCode.Usage, `--kv must be one of ${KV_TYPES.join(', ')}, got "${values.kv}"\n\nUsage: ${PLAN_USAGE}`);
  return {
    source,
    quants,
    contextPerSlot: integerFlag('ctx', values.ctx, 256, 4_194_304),
    parallel: integerFlag('parallel', values.parallel, 1, 256),
    kvType: values.kv as ModelPlanRequest['kvType'],
    flashAttention: values['no-flash-attn'] ? false : undefined,
    ...(values.for === undefined ? {} : { adapterFor: values.for }),
  };
}

function params(count: number | null): string {
  if (count === null) return '—';
  return count >= 1e9 ? `${(count / 1e9).toFixed(1)}B` : `${(count / 1e6).toFixed(0)}M`;
}

function fitCell(candidate: PlannedCandidate): string {
  if (candidate.adapter) return 'LoRA adapter';
  if (candidate.projector) return 'projector';
  if (!candidate.fit) return 'unreadable';
  const { verdict, layersOnGpu, layersTotal } = candidate.fit;
  if (verdict === 'fits') return `fits (${layersOnGpu}/${layersTotal} layers)`;
  if (verdict === 'partial') return `partial: ${layersOnGpu}/${layersTotal} layers`;
  if (verdict === 'cpu') return 'CPU only';
  return 'does not fit';
}

function measuredCell(candidate: PlannedCandidate): string {
  const measured = candidate.measured;
  if (!measured) return '—';
  const share = measured.ofCeiling === null ? '' : ` (${Math.round(measured.ofCeiling * 100)} %)`;
  return `${measured.tokensPerS.toFixed(measured.tokensPerS < 10 ? 1 : 0)}${share}`;
}

function candidateRow(candidate: PlannedCandidate): string[] {
  const memory = candidate.memory;
  return [
    candidate.label,
    memorySize(candidate.sizeBytes),
    params(candidate.parameterCount),
    memory ? memorySize(memory.kvBytes) : '—',
    memory ? memorySize(memory.computeBytes) : '—',
    candidate.fit ? memorySize(candidate.fit.gpuBytes > 0 ? candidate.fit.gpuBytes : candidate.fit.hostBytes) : '—',
    fitCell(candidate),
    candidate.fit?.largestFullContext?.toLocaleString('en-US') ?? '—',
    candidate.ceiling ? candidate.ceiling.tokensPerS.toFixed(candidate.ceiling.tokensPerS < 10 ? 1 : 0) : '—',
    measuredCell(candidate),
  ];
}

/** What a LoRA adapter's header says, and whether it fits the base model `--for` named. */
function adapterLine(label: string, adapter: NonNullable<PlannedCandidate['adapter']>, fromHub: boolean): string {
  const facts = `a LoRA adapter for ${adapter.architecture ?? 'an unnamed architecture'} models, rank ${adapter.rank}${adapter.alpha === null ? '' : `, alpha ${adapter.alpha}`}, on ${adapter.targets.length} tensors`;
  if (!adapter.base) return `${label}: ${facts}; --for MODEL checks it against a base model${fromHub ? ' before you pull it' : ''}`;
  return adapter.base.fits
    ? `${label}: ${facts}; fits ${adapter.base.model}`
    : `${label}: ${facts}; does not fit ${adapter.base.model}: ${adapter.base.problem}`;
}

/** What a projector's header says it encodes, and how it is served. */
function projectorLine(label: string, file: string, projector: NonNullable<PlannedCandidate['projector']>, fromHub: boolean): string {
  const encodes = projectorEncodes(projector);
  const serve = fromHub
    ? `pull it with the model, and serve the model with --set projector=${file.split('/').pop()}`
    : `serve the model with --set projector=${file}`;
  return `${label}: a multimodal projector${projector.projectorType ? ` (${projector.projectorType})` : ''} for ${encodes}; ${serve}`;
}

/** The plan as a terminal reads it: the settings, the memory pools, one row per candidate, then what each row leaves out. */
export function planText(plan: ModelPlan): string {
  const { settings } = plan;
  const lines = [
    `Plan for ${plan.source}${plan.revision ? ` (revision ${plan.revision})` : ''}: ${settings.contextPerSlot.toLocaleString('en-US')} tokens per slot × ${settings.parallel} slot${settings.parallel === 1 ? '' : 's'} (--ctx-size ${(settings.contextPerSlot * settings.parallel).toLocaleString('en-US')}), KV ${settings.kvType}, flash attention ${settings.flashAttention ? 'on' : 'off'}, ubatch ${settings.ubatch}`,
    ...plan.devices.map(
      (device) =>
        `  ${device.name}: ${memorySize(device.freeBytes)} ${device.kind === 'gpu' ? 'free' : 'available'} of ${memorySize(device.totalBytes)}; ${device.bandwidthGbPerS === null ? 'bandwidth unknown' : `${device.bandwidthGbPerS.toFixed(0)} GB/s`} (${device.bandwidthSource})`,
    ),
    ...(plan.devices.some((device) => device.kind === 'gpu') ? [] : [`  no GPU: ${plan.gpuSource}`]),
    '',
    formatTable([
      ['quant', 'size', 'params', 'KV cache', 'compute', 'needs', 'fit', 'largest ctx that fits', 'ceiling tok/s', 'measured tok/s'],
      ...plan.candidates.map(candidateRow),
    ]),
  ];
  const fromHub = plan.source.startsWith('hf:');
  const notes = plan.candidates.flatMap((candidate) => [
    ...(candidate.problem ? [`${candidate.label}: ${candidate.problem}`] : []),
    ...(candidate.adapter ? [adapterLine(candidate.label, candidate.adapter, fromHub)] : []),
    ...(candidate.projector ? [projectorLine(candidate.label, candidate.files[0]!, candidate.projector, fromHub)] : []),
    ...(candidate.fit && candidate.fit.verdict !== 'fits' ? [`${candidate.label}: ${candidate.fit.detail}`] : []),
    ...(candidate.memory?.notes ?? []).map((note) => `${candidate.label}: ${note}`),
    ...(candidate.ceilingReason && candidate.fit?.verdict !== 'no' ? [`${candidate.label}: no ceiling: ${candidate.ceilingReason}`] : []),
    ...(candidate.measured
      ? [
          `${candidate.label}: measured in run ${candidate.measured.runId.slice(0, 8)} (${candidate.measured.startedAt}), 1000 / mean TPOT${candidate.measured.decodeSequences && candidate.measured.decodeSequences > 1.05 ? ` with ${candidate.measured.decodeSequences.toFixed(1)} sequences decoding at once` : ''}`,
        ]
      : []),
  ]);
  lines.push(
    '',
    'needs: on the GPUs for "fits" and "partial", in RAM for "CPU only". The compute buffer is an estimate (docs/METRICS.md, "Model plan"); each GPU also keeps 512 MiB for the runtime.',
    'ceiling: one sequence at an empty context, memory bandwidth ÷ the weights a decode step reads; a measured run lands below it.',
    ...notes,
  );
  return lines.join('\n');
}
