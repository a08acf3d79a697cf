import type { EngineCapabilities } from '../../../shared/contract/server';
import { ErrorCode } from '../../../shared/errors';
import { AppError } from '../../core/errors';
import { isLoopback } from '../../core/loopback';

/**
 * Engines Infer Lab does not launch: an Ollama daemon (models loaded and unloaded through
 * its API) and any OpenAI-compatible URL. The same workloads run against them; what they
 * cannot do (cold process, slot erase, server timings) is declared, not faked.
 */
export const OLLAMA_CAPABILITIES: EngineCapabilities = {
  managedProcess: false,
  coldProcess: false,
  promptCacheControl: false,
  slotErase: false,
  serverMetrics: false,
  serverTimings: false,
  tokenize: false,
  gpuLayers: true,
  kvCacheTypes: false,
};

/** An arbitrary OpenAI-compatible endpoint: as Ollama, without even GPU-layer control. */
export const OPENAI_ENDPOINT_CAPABILITIES: EngineCapabilities = { ...OLLAMA_CAPABILITIES, gpuLayers: false };

export interface OllamaModel {
  name: string;
  sizeBytes: number | null;
  quantization: string | null;
  parameterSize: string | null;
}

export interface OllamaLoadedModel {
  name: string;
  sizeBytes: number | null;
  vramBytes: number | null;
  expiresAt: string | null;
}

function record(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new AppError(ErrorCode.InvalidInput, `${what}: expected a JSON object`);
  return value as Record<string, unknown>;
}

function list(value: unknown, field: string, what: string): Record<string, unknown>[] {
  const items = record(value, what)[field];
  if (!Array.isArray(items)) throw new AppError(ErrorCode.InvalidInput, `${what}: field "${field}" must be a list`);
  return items.map((item, index) => record(item, `${what} ${field}[${index}]`));
}

const numberOrNull = (value: unknown) => (typeof value === 'number' ? value : null);
const stringOrNull = (value: unknown) => (typeof value === 'string' ? value : null);

/** GET /api/tags */
export function parseOllamaTags(body: unknown): OllamaModel[] {
  return list(body, 'models', 'Ollama /api/tags').map((model) => {
    const details = (model.details ?? {}) as Record<string, unknown>;
    return {
      name: String(model.name ?? model.model),
      sizeBytes: numberOrNull(model.size),
      quantization: stringOrNull(details.quantization_level),
      parameterSize: stringOrNull(details.parameter_size),
    };
  });
}

/** GET /api/ps: the models loaded now, with the VRAM each holds. */
export function parseOllamaPs(body: unknown): OllamaLoadedModel[] {
  return list(body, 'models', 'Ollama /api/ps').map((model) => ({
    name: String(model.name ?? model.model),
    sizeBytes: numberOrNull(model.size),
    vramBytes: numberOrNull(model.size_vram),
    expiresAt: stringOrNull(model.expires_at),
  }));
}

/** GET /v1/models on any OpenAI-compatible server. */
export function parseOpenAiModels(body: unknown): string[] {
  return list(body, 'data', 'GET /v1/models').map((model) => String(model.id));
}

export class OllamaClient {
  constructor(readonly baseUrl: string = process.env.OLLAMA_HOST ? normalizeHost(process.env.OLLAMA_HOST) : 'http://127.0.0.1:11434') {}

  private async request(path: string, init?: RequestInit): Promise<unknown> {
    let response: Response;
    try {
      response = await fetch(`${this.baseUrl}${path}`, {
        ...init,
        headers: { 'content-type': 'application/json' },
        signal: AbortSignal.timeout(300_000),
      });
    } catch (error) {
      throw new AppError(
        ErrorCode.RequestFailed,
        `Cannot reach Ollama at ${this.baseUrl} (${(error as Error).message}); is the daemon running?`,
      );
    }
    if (!response.ok)
      throw new AppError(
        ErrorCode.RequestFailed,
        `Ollama ${path} answered HTTP ${response.status}: ${(await response.text()).slice(0, 300)}`,
      );
    return response.json();
  }

  async models(): Promise<OllamaModel[]> {
    return parseOllamaTags(await this.request('/api/tags'));
  }

  async loaded(): Promise<OllamaLoadedModel[]> {
    return parseOllamaPs(await this.request('/api/ps'));
  }

  /** Loads a model and keeps it resident for `keepAlive` (an empty prompt only loads). */
  async load(model: string, keepAlive = '30m'): Promise<void> {
    await this.request('/api/generate', {
      method: 'POST',
      body: JSON.stringify({ model, prompt: '', keep_alive: keepAlive, stream: false }),
    });
  }

  async unload(model: string): Promise<void> {
    await this.request('/api/generate', { method: 'POST', body: JSON.stringify({ model, prompt: '', keep_alive: 0, stream: false }) });
  }

  /** The OpenAI-compatible base the load generator uses. */
  get openAiBaseUrl(): string {
    return this.baseUrl;
  }
}

function normalizeHost(host: string): string {
  const withScheme = /^https?:\/\//.test(host) ? host : `http://${host}`;
  return withScheme.replace(/\/$/, '');
}

/** An unmanaged OpenAI-compatible URL; the API key comes from an environment variable, never from a file. */
export function endpointHeaders(env: NodeJS.ProcessEnv = process.env, keyVariable = 'INFERLAB_API_KEY'): Record<string, string> {
  const key = env[keyVariable];
  return key ? { authorization: `Bearer ${key}` } : {};
}

/** Whether a URL's host is this machine's loopback (see core/loopback.ts). */
export function isLoopbackUrl(target: string): boolean {
  try {
    return isLoopback(new URL(target).hostname);
  } catch {
    return false;
  }
}

/** Whether `target` lies under `configured`: same scheme, host and port, and a path at or below it. */
export function endpointCovers(configured: string, target: string): boolean {
  let base: URL;
  let url: URL;
  try {
    base = new URL(configured);
    url = new URL(target);
  } catch {
    return false;
  }
  if (base.protocol !== url.protocol || base.hostname.toLowerCase() !== url.hostname.toLowerCase() || base.port !== url.port) return false;
  // A run's base URL drops the OpenAI `/v1` suffix, so an entry written with it still covers the run.
  const prefix = base.pathname.replace(/\/+$/, '').replace(/\/v1$/, '');
  return url.pathname === prefix || url.pathname.startsWith(`${prefix}/`) || prefix === '';
}

/**
 * The API key for a run that a request over RPC names: only the key configured for that
 * endpoint in `endpointKeys`, so a request cannot send the user's key to a host of its choosing.
 */
export function configuredEndpointHeaders(
  url: string,
  keys: readonly { endpoint: string; env: string }[],
  env: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const entry = keys.find((candidate) => endpointCovers(candidate.endpoint, url));
  return entry ? endpointHeaders(env, entry.env) : {};
}

export { normalizeHost };
