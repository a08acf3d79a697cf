import type { ServerAddress } from '../../core/server-address';
import { keepHuggingFaceToken } from '../../core/child-env';
import { gpuSelectionEnv } from '../gpu-selection';
import type { GpuIdentities } from '../gpu-identity';
import type { EngineCapabilities, ServerFaultCode } from '../../../shared/contract/server';
import { emptyEffectiveConfig, fetchJson, type ManagedEngineAdapter } from '../engine-adapter';

/**
 * vLLM and SGLang: Python servers launched from a command the user configured (for
 * example `vllm` or `/opt/venv/bin/python -m sglang.launch_server`), split into argv.
 * Neither can run on a machine without a GPU; their argv building and response parsing are
 * tested against recorded fixtures.
 */
export const PYTHON_SERVER_CAPABILITIES: EngineCapabilities = {
  managedProcess: true,
  coldProcess: true,
  promptCacheControl: true,
  slotErase: false,
  serverMetrics: true,
  serverTimings: false,
  tokenize: true,
  gpuLayers: false,
  kvCacheTypes: true,
};

const PYTHON_FAULTS: { code: ServerFaultCode; pattern: RegExp; hint: string }[] = [
  {
    code: 'out_of_memory',
    pattern: /CUDA out of memory|OutOfMemoryError|No available memory for the cache blocks|Not enough memory/i,
    hint: 'Lower the context length or the number of concurrent sequences, or the GPU memory fraction.',
  },
  { code: 'bind_failed', pattern: /address already in use|Errno 98/i, hint: 'The port was taken; start again or stop the other server.' },
  {
    code: 'unsupported_flag',
    pattern: /unrecognized arguments|error: argument/i,
    hint: 'This version does not accept one of the flags; remove it from extraFlags.',
  },
  {
    code: 'binary_missing',
    pattern: /^spawn failed: .*(ENOENT|EACCES)|No module named/,
    hint: 'The configured command or Python module is missing; fix the engine command in config.json.',
  },
  {
    code: 'bad_model_file',
    pattern: /OSError: .*(does not appear to have|not a valid)|ValueError: .*model/i,
    hint: 'The model path or repository is not a model this engine can load.',
  },
];

function classify(lines: readonly string[]) {
  for (const rule of PYTHON_FAULTS) if (lines.some((line) => rule.pattern.test(line))) return { code: rule.code, hint: rule.hint };
  return null;
}

async function readOpenAiModelConfig(server: ServerAddress, argv: string[]) {
  const models = await fetchJson(`${server.baseUrl}/v1/models`, { headers: { ...server.headers } });
  const first = (Array.isArray(models?.data) ? models.data[0] : null) as { id?: string; max_model_len?: number } | null;
  return {
    ...emptyEffectiveConfig(argv),
    model: first?.id ?? null,
    contextSize: first?.max_model_len ?? null,
    contextPerSlot: first?.max_model_len ?? null,
  };
}

/** Splits a configured command line on whitespace, honouring double quotes; no shell is involved. */
export function splitCommand(command: string): string[] {
  const parts = command.match(/"[^"]*"|\S+/g) ?? [];
  return parts.map((part) => part.replace(/^"|"$/g, ''));
}

/** What vLLM and SGLang share: capabilities, routes, credentials, fault classes and how the effective configuration is read. */
const PYTHON_SERVER_COMMON = {
  keepsCredential: keepHuggingFaceToken,
  capabilities: PYTHON_SERVER_CAPABILITIES,
  healthPath: '/health',
  metricsPath: '/metrics',
  classifyFault: classify,
  readEffectiveConfig: (server: ServerAddress, _lines: readonly string[], argv: string[]) => readOpenAiModelConfig(server, argv),
} satisfies Partial<ManagedEngineAdapter>;

/** `identities`: the machine's GPU listings, whose amd-smi list turns a GPU choice into ROCm's numbers. */
export function vllmAdapter(command: string, identities: GpuIdentities | null = null): ManagedEngineAdapter {
  const [program, ...prefix] = splitCommand(command);
  if (!program) throw new Error('vLLM command is empty');
  return {
    id: 'vllm',
    apiKeyEnv: 'VLLM_API_KEY',
    ...PYTHON_SERVER_COMMON,
    launch: ({ modelPath, port, profile }) => ({
      program,
      args: [
        ...prefix,
        ...(prefix.length === 0 ? ['serve'] : []),
        modelPath,
        '--host',
        '127.0.0.1',
        '--port',
        String(port),
        '--max-model-len',
        String(profile.contextSize),
        '--max-num-seqs',
        String(profile.parallelSlots),
        '--max-num-batched-tokens',
        String(profile.batchSize),
        '--kv-cache-dtype',
        profile.cacheTypeK === 'f16' ? 'auto' : profile.cacheTypeK,
        ...(profile.cacheRamMib === 0 ? ['--no-enable-prefix-caching'] : ['--enable-prefix-caching']),
        ...profile.extraFlags,
      ],
      // A CUDA or ROCm build: which one is the Python environment's business.
      env: gpuSelectionEnv(profile.gpuDevices, null, identities),
    }),
    cacheReset: { method: 'POST', path: '/reset_prefix_cache' },
    isLoadProgress: (line) => /Loading|weights|Memory profiling|graph|KV cache|Starting vLLM/i.test(line),
    isListening: (line) => /Uvicorn running on|Application startup complete/.test(line),
  };
}

export function sglangAdapter(command: string, identities: GpuIdentities | null = null): ManagedEngineAdapter {
  const [program, ...prefix] = splitCommand(command);
  if (!program) throw new Error('SGLang command is empty');
  return {
    id: 'sglang',
    // SGLang takes its key only as a flag, which other local users could read.
    apiKeyEnv: null,
    ...PYTHON_SERVER_COMMON,
    launch: ({ modelPath, port, profile }) => ({
      program,
      args: [
        ...prefix,
        '--model-path',
        modelPath,
        '--host',
        '127.0.0.1',
        '--port',
        String(port),
        '--context-length',
        String(profile.contextSize),
        '--max-running-requests',
        String(profile.parallelSlots),
        '--chunked-prefill-size',
        String(profile.batchSize),
        '--kv-cache-dtype',
        profile.cacheTypeK === 'f16' ? 'auto' : profile.cacheTypeK,
        '--enable-metrics',
        ...(profile.cacheRamMib === 0 ? ['--disable-radix-cache'] : []),
        ...profile.extraFlags,
      ],
      env: gpuSelectionEnv(profile.gpuDevices, null, identities),
    }),
    cacheReset: { method: 'POST', path: '/flush_cache' },
    isLoadProgress: (line) => /Load weight|Memory pool|Capture cuda graph|KV Cache|Init torch/i.test(line),
    isListening: (line) => /Uvicorn running on|The server is fired up/.test(line),
  };
}
