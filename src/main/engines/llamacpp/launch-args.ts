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
  '--fit': 'fixed',
  '-fit': 'fixed',
  '--metrics': 'fixed',
  '--slots': 'fixed',
  '--no-slots': 'fixed',
  '-lv': 'fixed',
  '--log-verbosity': 'fixed',
};

/** Every tuning flag explicit: nothing is left to the build's defaults, which change between builds. */
export function buildLlamaServerArgs(modelPath: string, port: number, profile: ServerProfile): string[] {
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
    ...profile.extraFlags,
  ];
}
