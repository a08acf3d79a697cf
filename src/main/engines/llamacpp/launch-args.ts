import os from 'node:os';

/** Every tuning flag Infer Lab passes to llama-server. Nothing is left to the build's defaults. */
export interface LlamaServerSettings {
  contextSize: number;
  parallelSlots: number;
  batchSize: number;
  ubatchSize: number;
  gpuLayers: number;
  flashAttention: 'on' | 'off' | 'auto';
  cacheTypeK: string;
  cacheTypeV: string;
  threads: number;
  /** Host-RAM prompt cache in MiB; 0 disables it (needed for cold-cache conditions). */
  cacheRamMib: number;
  /** Minimum chunk size for KV-shift cache reuse; 0 disables it. */
  cacheReuse: number;
}

export function defaultLlamaServerSettings(): LlamaServerSettings {
  return {
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
  };
}

export function buildLlamaServerArgs(modelPath: string, port: number, settings: LlamaServerSettings): string[] {
  return [
    '--host', '127.0.0.1',
    '--port', String(port),
    '--metrics',
    '--slots',
    '--no-webui',
    // Automatic fitting would silently change the settings below to fit device memory.
    '--fit', 'off',
    '-m', modelPath,
    '-c', String(settings.contextSize),
    '-np', String(settings.parallelSlots),
    '-b', String(settings.batchSize),
    '-ub', String(settings.ubatchSize),
    '-ngl', String(settings.gpuLayers),
    '-fa', settings.flashAttention,
    '-ctk', settings.cacheTypeK,
    '-ctv', settings.cacheTypeV,
    '-t', String(settings.threads),
    '--cache-ram', String(settings.cacheRamMib),
    '--cache-reuse', String(settings.cacheReuse),
  ];
}
