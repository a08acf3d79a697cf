import type { EngineId, ProfileProblem, ServerProfile } from '../../../shared/contract/server';
import { ErrorCode } from '../../../shared/errors';
import { AppError } from '../../core/errors';
import { KV_CACHE_TYPES, PROFILE_FIELD_HELP } from '../../../shared/profile-fields';
import { extraFlagProblems } from './extra-flags';
import { defaultProfile, MANAGED_FLAGS } from './launch-args';
import { parseGpuDevices } from '../../../shared/gpu-devices';
import { loraAdapterEntries, MAX_SERVER_ADAPTERS } from '../../../shared/lora-adapter-entry';

export { KV_CACHE_TYPES };
const UNQUANTIZED_KV = new Set(['f32', 'f16', 'bf16']);

/** What each option does, for `--set` help and the profile editor. */
const ALIASES: Record<keyof typeof PROFILE_FIELD_HELP, string[]> = {
  contextSize: ['c', 'ctx-size'],
  parallelSlots: ['np', 'parallel'],
  batchSize: ['b', 'batch-size'],
  ubatchSize: ['ub', 'ubatch-size'],
  gpuLayers: ['ngl', 'gpu-layers'],
  flashAttention: ['fa', 'flash-attn'],
  cacheTypeK: ['ctk', 'cache-type-k'],
  cacheTypeV: ['ctv', 'cache-type-v'],
  threads: ['t'],
  cacheRamMib: ['cram', 'cache-ram'],
  cacheReuse: ['cache-reuse'],
  allowContextOverTrained: ['allow-context-over-trained'],
  draftModel: ['md', 'model-draft', 'spec-draft-model'],
  draftMax: ['spec-draft-n-max'],
  draftMin: ['spec-draft-n-min'],
  draftPMin: ['spec-draft-p-min', 'draft-p-min'],
  draftGpuLayers: ['ngld', 'gpu-layers-draft', 'spec-draft-ngl'],
  loraAdapter: ['lora'],
  loraScale: ['lora-scale'],
  projector: ['mmproj', 'mm'],
  gpuDevices: ['devices', 'device', 'dev'],
};

/** Each profile field, the llama-server names --set also accepts for it, and its help (declared in shared/profile-fields). */
export const PROFILE_FIELDS: Record<keyof typeof PROFILE_FIELD_HELP, { aliases: string[]; help: string }> = Object.fromEntries(
  Object.entries(PROFILE_FIELD_HELP).map(([field, { help }]) => [
    field,
    {
      aliases: ALIASES[field as keyof typeof ALIASES],
      help: field.startsWith('cacheType') ? `${help} Types: ${KV_CACHE_TYPES.join(', ')}.` : help,
    },
  ]),
) as Record<keyof typeof PROFILE_FIELD_HELP, { aliases: string[]; help: string }>;

function integerProblem(profile: ServerProfile, field: keyof ServerProfile, min: number, max: number): ProfileProblem | null {
  const value = profile[field];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    return { field, message: `${field} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}` };
  }
  return null;
}

/**
 * Checks a profile before anything is launched. `trainedContext` comes from the model's
 * header when known. Returns every problem, each naming its field.
 */
export function validateProfile(
  profile: ServerProfile,
  model: { trainedContext: number | null } = { trainedContext: null },
  engine: EngineId = 'llama.cpp',
): ProfileProblem[] {
  const problems: (ProfileProblem | null)[] = [
    typeof profile.name === 'string' && /^[\w.-]{1,64}$/.test(profile.name)
      ? null
      : { field: 'name', message: 'name must be 1-64 letters, digits, dots, dashes or underscores' },
    integerProblem(profile, 'contextSize', 128, 16_777_216),
    integerProblem(profile, 'parallelSlots', 1, 512),
    integerProblem(profile, 'batchSize', 1, 1_048_576),
    integerProblem(profile, 'ubatchSize', 1, 1_048_576),
    integerProblem(profile, 'gpuLayers', 0, 10_000),
    integerProblem(profile, 'threads', 1, 4096),
    integerProblem(profile, 'cacheRamMib', -1, 16_777_216),
    integerProblem(profile, 'cacheReuse', 0, 1_048_576),
  ];
  problems.push(
    ...draftProblems(profile, engine),
    ...loraProblems(profile, engine),
    ...projectorProblems(profile, engine),
    ...gpuDeviceProblems(profile),
  );
  if (!['on', 'off', 'auto'].includes(profile.flashAttention))
    problems.push({
      field: 'flashAttention',
      message: `flashAttention must be on, off or auto, got ${JSON.stringify(profile.flashAttention)}`,
    });
  for (const field of ['cacheTypeK', 'cacheTypeV'] as const) {
    if (!(KV_CACHE_TYPES as readonly string[]).includes(profile[field]))
      problems.push({ field, message: `${field} must be one of ${KV_CACHE_TYPES.join(', ')}, got ${JSON.stringify(profile[field])}` });
  }
  if (!UNQUANTIZED_KV.has(profile.cacheTypeV) && profile.flashAttention !== 'on') {
    problems.push({
      field: 'cacheTypeV',
      message: `a quantized V cache (${profile.cacheTypeV}) needs flashAttention on; set flashAttention=on or cacheTypeV=f16`,
    });
  }
  if (Number.isInteger(profile.ubatchSize) && Number.isInteger(profile.batchSize) && profile.ubatchSize > profile.batchSize) {
    problems.push({ field: 'ubatchSize', message: `ubatchSize (${profile.ubatchSize}) cannot exceed batchSize (${profile.batchSize})` });
  }
  if (
    Number.isInteger(profile.contextSize) &&
    Number.isInteger(profile.parallelSlots) &&
    profile.contextSize / profile.parallelSlots < 64
  ) {
    problems.push({
      field: 'parallelSlots',
      message: `each of the ${profile.parallelSlots} slots would get ${Math.floor(profile.contextSize / profile.parallelSlots)} tokens of context; raise contextSize or lower parallelSlots`,
    });
  }
  if (
    model.trainedContext !== null &&
    profile.contextSize / Math.max(1, profile.parallelSlots) > model.trainedContext &&
    !profile.allowContextOverTrained
  ) {
    problems.push({
      field: 'contextSize',
      message: `the per-slot context (${Math.floor(profile.contextSize / profile.parallelSlots)}) exceeds the model's trained context (${model.trainedContext}); lower contextSize or set allowContextOverTrained=true`,
    });
  }
  if (!Array.isArray(profile.extraFlags) || profile.extraFlags.some((flag) => typeof flag !== 'string')) {
    problems.push({ field: 'extraFlags', message: 'extraFlags must be a list of strings' });
  } else {
    // vLLM and SGLang are launched only from the CLI, whose user may pass their flags as given.
    for (const problem of engine === 'llama.cpp' ? extraFlagProblems(profile.extraFlags) : []) {
      const managed = MANAGED_FLAGS[problem.flag];
      problems.push({
        field: 'extraFlags',
        message: managed
          ? `${problem.flag} is set by Infer Lab${managed in PROFILE_FIELDS ? `; use the profile field ${managed}` : ''}`
          : problem.message,
      });
    }
  }
  return problems.filter((problem): problem is ProfileProblem => problem !== null);
}

/** llama-server's own device choice, by backend device name (CUDA0, Vulkan1); see gpuDevices. */
const DEVICE_FLAGS = ['-dev', '--device'];

function gpuDeviceProblems(profile: ServerProfile): ProfileProblem[] {
  if (profile.gpuDevices === undefined) return [];
  if (typeof profile.gpuDevices !== 'string') return [{ field: 'gpuDevices', message: 'gpuDevices must be "all" or indexes such as 0,1' }];
  const parsed = parseGpuDevices(profile.gpuDevices);
  if ('problem' in parsed) return [{ field: 'gpuDevices', message: parsed.problem }];
  const flag = DEVICE_FLAGS.find((name) => profile.extraFlags.includes(name));
  if (parsed.indexes !== null && flag)
    return [
      { field: 'extraFlags', message: `${flag} and gpuDevices both choose GPUs; keep one (gpuDevices also limits telemetry to them)` },
    ];
  return [];
}

/** Extra flags that draft-free speculation may use, but that a profile with a draft model sets itself. */
const DRAFT_FLAGS = ['--spec-type', '--spec-draft-n-max', '--spec-draft-n-min', '--spec-draft-p-min', '--draft-p-min'];

function draftProblems(profile: ServerProfile, engine: EngineId): (ProfileProblem | null)[] {
  if (profile.draftModel === null) return [];
  if (typeof profile.draftModel !== 'string' || profile.draftModel.trim() === '')
    return [{ field: 'draftModel', message: 'draftModel must be a demo ref or a GGUF path, or none' }];
  if (engine !== 'llama.cpp')
    return [{ field: 'draftModel', message: `a draft model is a llama-server setting; ${engine} takes its own speculative flags` }];
  const problems = [
    integerProblem(profile, 'draftMax', 1, 256),
    integerProblem(profile, 'draftMin', 0, 256),
    integerProblem(profile, 'draftGpuLayers', 0, 10_000),
  ];
  if (typeof profile.draftPMin !== 'number' || !(profile.draftPMin >= 0 && profile.draftPMin <= 1))
    problems.push({ field: 'draftPMin', message: `draftPMin must be a probability from 0 to 1, got ${JSON.stringify(profile.draftPMin)}` });
  const overridden = DRAFT_FLAGS.filter((flag) => profile.extraFlags.includes(flag));
  if (overridden.length > 0)
    problems.push({
      field: 'extraFlags',
      message: `${overridden.join(', ')} would override the draft model's settings; use draftMax, draftMin and draftPMin`,
    });
  if (Number.isInteger(profile.draftMin) && Number.isInteger(profile.draftMax) && profile.draftMin > profile.draftMax)
    problems.push({ field: 'draftMin', message: `draftMin (${profile.draftMin}) cannot exceed draftMax (${profile.draftMax})` });
  return problems;
}

function loraProblems(profile: ServerProfile, engine: EngineId): ProfileProblem[] {
  const problems: ProfileProblem[] = [];
  const scale = profile.loraScale;
  if (scale !== undefined && (typeof scale !== 'number' || !(scale >= -4 && scale <= 4)))
    problems.push({ field: 'loraScale', message: `loraScale must be a number from -4 to 4, got ${JSON.stringify(scale)}` });
  if (profile.loraAdapter === undefined || profile.loraAdapter === null) return problems;
  if (typeof profile.loraAdapter !== 'string' || profile.loraAdapter.trim() === '')
    return [...problems, { field: 'loraAdapter', message: 'loraAdapter must be demo:lora or a GGUF adapter path, or none' }];
  if (engine !== 'llama.cpp')
    return [
      ...problems,
      { field: 'loraAdapter', message: `a LoRA adapter is a llama-server setting; ${engine} takes its own adapter flags` },
    ];
  return [...problems, ...adapterListProblems(profile.loraAdapter)];
}

/** Several adapters, one server: each named once, each scale a number llama-server takes. */
function adapterListProblems(setting: string): ProfileProblem[] {
  const entries = loraAdapterEntries(setting);
  const problems: ProfileProblem[] = [];
  if (entries.length > MAX_SERVER_ADAPTERS)
    problems.push({
      field: 'loraAdapter',
      message: `loraAdapter names ${entries.length} adapters; a server loads at most ${MAX_SERVER_ADAPTERS}`,
    });
  entries.forEach((entry, place) => {
    if (entry.scale !== undefined && !(entry.scale >= -4 && entry.scale <= 4))
      problems.push({ field: 'loraAdapter', message: `adapter ${place} (${entry.file}): its scale must be a number from -4 to 4` });
    if (entries.findIndex((other) => other.file === entry.file) < place)
      problems.push({ field: 'loraAdapter', message: `${entry.file} is named twice: give each adapter once (its id is its place)` });
  });
  return problems;
}

function projectorProblems(profile: ServerProfile, engine: EngineId): ProfileProblem[] {
  if (profile.projector === undefined || profile.projector === null) return [];
  if (typeof profile.projector !== 'string' || profile.projector.trim() === '')
    return [{ field: 'projector', message: 'projector must be demo:mmproj or an mmproj GGUF path, or none' }];
  if (engine !== 'llama.cpp')
    return [{ field: 'projector', message: `an image projector is a llama-server setting; ${engine} takes its own multimodal flags` }];
  return [];
}

export function assertValidProfile(
  profile: ServerProfile,
  model?: { trainedContext: number | null },
  engine: EngineId = 'llama.cpp',
): void {
  const problems = validateProfile(profile, model, engine);
  if (problems.length > 0) {
    throw new AppError(
      ErrorCode.InvalidInput,
      `Server profile "${profile.name}" is not valid:\n${problems.map((problem) => `  ${problem.field}: ${problem.message}`).join('\n')}`,
      { problems },
    );
  }
}

/** Applies `FIELD=VALUE` settings (field names or llama-server flag aliases) to a profile. */
export function applySettings(profile: ServerProfile, settings: readonly string[]): ServerProfile {
  const next: ServerProfile = { ...profile, extraFlags: [...profile.extraFlags] };
  for (const setting of settings) {
    const separator = setting.indexOf('=');
    if (separator <= 0) throw new AppError(ErrorCode.Usage, `--set expects FIELD=VALUE, got "${setting}"`);
    const name = setting.slice(0, separator).replace(/^-+/, '');
    const raw = setting.slice(separator + 1);
    if (name === 'extraFlags' || name === 'extra-flags') {
      next.extraFlags = raw.split(/\s+/).filter(Boolean);
      continue;
    }
    const field = (Object.keys(PROFILE_FIELDS) as (keyof typeof PROFILE_FIELDS)[]).find(
      (key) => key === name || PROFILE_FIELDS[key].aliases.includes(name),
    );
    if (!field) {
      const known = Object.entries(PROFILE_FIELDS)
        .map(([key, info]) => `${key} (${info.aliases.join(', ')})`)
        .join('; ');
      throw new AppError(ErrorCode.Usage, `Unknown server setting "${name}". Known settings: ${known}; extraFlags`);
    }
    const current = next[field];
    if (field === 'draftModel' || field === 'loraAdapter' || field === 'projector') {
      next[field] = ['', 'none', 'off'].includes(raw.trim()) ? null : raw;
    } else if (typeof current === 'number' || field === 'loraScale') {
      const value = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(value))
        throw new AppError(ErrorCode.Usage, `--set ${field} expects a number, got "${raw}"`);
      (next[field] as number) = value;
    } else if (typeof current === 'boolean') {
      if (raw !== 'true' && raw !== 'false') throw new AppError(ErrorCode.Usage, `--set ${field} expects true or false, got "${raw}"`);
      (next[field] as boolean) = raw === 'true';
    } else {
      (next[field] as string) = raw;
    }
  }
  return next;
}

/** The rules the profile store keeps saved profiles to: llama-server's defaults, and every field checked. */
export const SAVED_PROFILE_RULES = {
  defaults: (name?: string): ServerProfile => defaultProfile(name),
  validate: (profile: ServerProfile): void => assertValidProfile(profile),
};
