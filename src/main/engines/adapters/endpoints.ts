import { ErrorCode } from '../../../shared/errors';
import { AppError } from '../../core/errors';
import { isLoopback } from '../../core/loopback';

/**
 * Servers Infer Lab does not launch: any OpenAI-compatible URL (vLLM, SGLang, Ollama's
 * `/v1`, a llama-server elsewhere). The same workloads run against them; the run records what
 * they cannot report (cold process, slot erase, server timings) as missing, not faked.
 */

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

/** GET /v1/models on any OpenAI-compatible server. */
export function parseOpenAiModels(body: unknown): string[] {
  return list(body, 'data', 'GET /v1/models').map((model) => String(model.id));
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
