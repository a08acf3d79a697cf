import type { ModelPlanRequest, PlannedCandidate } from '../../shared/contract/models';
import type { ServerProfile } from '../../shared/contract';
import { ErrorCode } from '../../shared/errors';
import { memorySize } from '../../shared/memory-size';
import { AppError } from '../core/errors';
import type { ServiceContainer } from '../services';
import type { ProgressWriter } from './progress';
import { pullProgressPrinter } from './pull-lines';

/** `experiment quant --from hf:OWNER/REPO --quants A,B,...`: the question asked from a model name. */
export interface QuantsFromHub {
  source: string;
  quants: string[] | 'all';
}

const PLAN_KV_TYPES = ['f16', 'q8_0', 'q4_0'] as const;

/** The plan's settings from the profile the experiment will serve with, so "fits" means fits as it will run. */
export function planSettingsOf(profile: ServerProfile): Omit<ModelPlanRequest, 'source' | 'quants'> {
  const parallel = Math.max(1, profile.parallelSlots);
  const kvType = PLAN_KV_TYPES.find((type) => type === profile.cacheTypeK.toLowerCase());
  return {
    ...(profile.contextSize > 0 ? { contextPerSlot: Math.max(256, Math.floor(profile.contextSize / parallel)) } : {}),
    parallel,
    ...(kvType ? { kvType } : {}),
    flashAttention: profile.flashAttention !== 'off',
  };
}

/** Why a planned candidate cannot take part, or null when it can (on the GPU, partly, or on the CPU). */
export function refusalOf(candidate: PlannedCandidate): string | null {
  if (candidate.problem) return candidate.problem;
  if (!candidate.fit) return 'its header could not be read';
  if (candidate.fit.verdict === 'no') return `does not fit this machine: ${candidate.fit.detail}`;
  return null;
}

/**
 * Plans the named quantizations against this machine, refuses those that cannot run (naming
 * why), pulls the rest into the Hugging Face cache and returns them as the experiment's files.
 */
export async function quantFilesFromHub(
  request: QuantsFromHub,
  profile: ServerProfile,
  container: ServiceContainer,
  progress: ProgressWriter,
  signal: AbortSignal,
): Promise<{ name: string; path: string }[]> {
  const plan = await container.models.plan({
    source: request.source,
    quants: request.quants === 'all' ? [] : request.quants,
    ...planSettingsOf(profile),
  });
  const missing = plan.problems.filter((problem) => problem.startsWith('no '));
  if (missing.length > 0) throw new AppError(ErrorCode.NotFound, missing.join('; '));
  const runnable: string[] = [];
  for (const candidate of plan.candidates) {
    const refusal = refusalOf(candidate);
    if (refusal) progress.line(`${candidate.label}: left out: ${refusal}`);
    else {
      runnable.push(candidate.label);
      progress.line(`${candidate.label} (${memorySize(candidate.sizeBytes)}): ${candidate.fit!.detail}`);
    }
  }
  if (runnable.length < 2)
    throw new AppError(
      ErrorCode.InvalidInput,
      `a comparison needs two quantizations this machine can run, and ${runnable.length === 0 ? 'none' : `only ${runnable[0]}`} of ${plan.candidates.map((candidate) => candidate.label).join(', ')} can: name others (inferlab models plan ${request.source} --quants all shows what fits)`,
    );
  const pulled = await container.models.pullAndWait(
    { source: request.source, quants: runnable },
    { signal, onProgress: pullProgressPrinter(progress) },
  );
  progress.end();
  progress.line(
    `${request.source} at ${pulled.commit.slice(0, 12)}: ${memorySize(pulled.downloadedBytes)} downloaded into ${pulled.cacheDir}`,
  );
  // The first is the baseline: the first named, or the largest (the most precise) when all were asked for.
  const rank = (label: string) =>
    request.quants === 'all' ? 0 : request.quants.findIndex((quant) => quant.toUpperCase() === label.toUpperCase());
  const ordered = [...pulled.models].sort((a, b) => rank(a.label) - rank(b.label) || b.sizeBytes - a.sizeBytes);
  return ordered.map((model) => ({ name: model.label, path: model.files[0]! }));
}
