import os from 'node:os';
import type { ServerProfile } from '../../../shared/contract/server';

export const DEFAULT_PROFILE_NAME = 'default';

export function defaultProfile(name = DEFAULT_PROFILE_NAME): ServerProfile {
  return {
    name,
    contextSize: 4096,
    parallelSlots: 1,
    batchSize: 2048,
    ubatchSize: 512,
    gpuLayers: 999,
    flashAttention: 'auto',
    cacheTypeK: 'f16',
    cacheTypeV: 'f16',
    threads: Math.max(1, os.availableParallelism()),
    cacheRamMib: 8192,
    cacheReuse: 0,
    allowContextOverTrained: false,
    draftModel: null,
    draftMax: 16,
    draftMin: 0,
    draftPMin: 0.75,
    draftGpuLayers: 999,
    loraAdapter: null,
    loraScale: 1,
    gpuDevices: 'all',
    extraFlags: [],
  };
}

/** The flags Infer Lab sets itself; extra flags may not override them. */
export const MANAGED_FLAGS: Record<string, keyof ServerProfile | 'port' | 'host' | 'model' | 'fixed'> = {
  '--host': 'host',
  '--port': 'port',
  '-m': 'model',
  '--model': 'model',
  '-c': 'contextSize',
  '--ctx-size': 'contextSize',
  '-np': 'parallelSlots',
  '--parallel': 'parallelSlots',
  '-b': 'batchSize',
  '--batch-size': 'batchSize',
  '-ub': 'ubatchSize',
  '--ubatch-size': 'ubatchSize',
  '-ngl': 'gpuLayers',
  '--gpu-layers': 'gpuLayers',
  '--n-gpu-layers': 'gpuLayers',
  '-fa': 'flashAttention',
  '--flash-attn': 'flashAttention',
  '-ctk': 'cacheTypeK',
  '--cache-type-k': 'cacheTypeK',
  '-ctv': 'cacheTypeV',
  '--cache-type-v': 'cacheTypeV',
  '-t': 'threads',
  '--threads': 'threads',
  '-cram': 'cacheRamMib',
  '--cache-ram': 'cacheRamMib',
  '--cache-reuse': 'cacheReuse',
  '-md': 'draftModel',
  '--model-draft': 'draftModel',
  '--spec-draft-model': 'draftModel',
  '-ngld': 'draftGpuLayers',
  '--gpu-layers-draft': 'draftGpuLayers',
  '--n-gpu-layers-draft': 'draftGpuLayers',
  '--spec-draft-ngl': 'draftGpuLayers',
  '--lora': 'loraAdapter',
  '--lora-scaled': 'loraAdapter',
  '-mm': 'projector',
  '--mmproj': 'projector',
  '--fit': 'fixed',
  '-fit': 'fixed',
  '--metrics': 'fixed',
  '--slots': 'fixed',
  '--no-slots': 'fixed',
  '-lv': 'fixed',
  '--log-verbosity': 'fixed',
};

/** Every tuning flag explicit: nothing is left to the build's defaults, which change between builds. */
export function buildLlamaServerArgs(
  modelPath: string,
  port: number,
  profile: ServerProfile,
  draftModelPath: string | null = null,
  loraAdapters: readonly LoadedLoraAdapter[] = [],
  projectorPath: string | null = null,
): string[] {
  return [
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--metrics',
    '--slots',
    '--no-webui',
    // Automatic fitting would silently change the settings below to fit device memory.
    '--fit',
    'off',
    // Level 4 logs buffer sizes and offloaded layers, read back as the effective configuration.
    '-lv',
    '4',
    '-m',
    modelPath,
    '-c',
    String(profile.contextSize),
    '-np',
    String(profile.parallelSlots),
    '-b',
    String(profile.batchSize),
    '-ub',
    String(profile.ubatchSize),
    '-ngl',
    String(profile.gpuLayers),
    '-fa',
    profile.flashAttention,
    '-ctk',
    profile.cacheTypeK,
    '-ctv',
    profile.cacheTypeV,
    '-t',
    String(profile.threads),
    '--cache-ram',
    String(profile.cacheRamMib),
    '--cache-reuse',
    String(profile.cacheReuse),
    ...draftArgs(profile, draftModelPath),
    ...loraAdapters.flatMap(loraArgs),
    ...(projectorPath ? ['--mmproj', projectorPath] : []),
    ...profile.extraFlags,
  ];
}

/** An adapter file the server loads, and the scale it applies it at unless a request says otherwise. */
export interface LoadedLoraAdapter {
  path: string;
  scale: number;
}

/**
 * One adapter at its scale: `--lora` applies it at 1, `--lora-scaled FILE:SCALE` at any other (the
 * pinned build's one-argument form; both split a value on commas, so such a path is refused first).
 * Each flag adds to the server's list, so the adapters' ids follow the profile's order.
 */
function loraArgs({ path, scale }: LoadedLoraAdapter): string[] {
  return scale === 1 ? ['--lora', path] : ['--lora-scaled', `${path}:${scale}`];
}

/**
 * Speculative decoding with a plain draft model: this build drafts with one only under
 * --spec-type draft-simple, and every limit is explicit so that a build's defaults cannot move it.
 */
function draftArgs(profile: ServerProfile, draftModelPath: string | null): string[] {
  if (profile.draftModel === null || draftModelPath === null) return [];
  return [
    '-md',
    draftModelPath,
    '--spec-type',
    'draft-simple',
    '--spec-draft-n-max',
    String(profile.draftMax),
    '--spec-draft-n-min',
    String(profile.draftMin),
    '--spec-draft-p-min',
    String(profile.draftPMin),
    '-ngld',
    String(profile.draftGpuLayers),
  ];
}
