import fs from 'node:fs';
import path from 'node:path';
import { ErrorCode } from '../../shared/errors';
import { AppError } from './errors';
import { userDataDir } from './paths';

/** Settings the user saved. Engine commands come only from here or the environment. */
export interface UserConfig {
  engine?: {
    /** Absolute path to a llama-server binary to use instead of PATH or the managed build. */
    llamaServerPath?: string;
    /** Command that starts vLLM, e.g. "vllm" or "/opt/venv/bin/vllm". */
    vllmCommand?: string;
    /** Command that starts SGLang, e.g. "/opt/venv/bin/python -m sglang.launch_server". */
    sglangCommand?: string;
  };
  /** Folders whose files requests over RPC (browser, desktop window) may name; the CLI may name any path. */
  roots?: {
    models?: string[];
    workloads?: string[];
    /** Folders of exported runs that may be imported. */
    results?: string[];
    /** Endpoints besides this machine's loopback that runs may target (URL prefixes: scheme, host, port, path). */
    endpoints?: string[];
  };
  /**
   * Which endpoint receives which API key: the key in environment variable `env` is sent to
   * URLs under `endpoint` (same scheme, host and port, path below it) and to nothing else.
   */
  endpointKeys?: { endpoint: string; env: string }[];
  /** What the Settings view saves. */
  ui?: {
    /** The name decisions are recorded under. */
    decisionName?: string;
    /** The profile the UI's forms start with. */
    defaultProfile?: string;
  };
  telemetry?: {
    /** How often a run samples the GPU and the server process (ms). */
    intervalMs?: number;
  };
}

export const TELEMETRY_INTERVAL_RANGE_MS = { min: 100, max: 10_000, default: 250 } as const;

export function userConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(userDataDir(env), 'config.json');
}

export function readUserConfig(env: NodeJS.ProcessEnv = process.env): UserConfig {
  const file = userConfigPath(env);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return {};
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new AppError(ErrorCode.InvalidInput, `${file}: not valid JSON (${(error as Error).message}); fix or delete the file`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new AppError(ErrorCode.InvalidInput, `${file}: expected a JSON object at the top level`);
  }
  const engine = (parsed as UserConfig).engine;
  if (engine !== undefined && (typeof engine !== 'object' || engine === null)) {
    throw new AppError(ErrorCode.InvalidInput, `${file}: field "engine" must be an object`);
  }
  for (const field of ['llamaServerPath', 'vllmCommand', 'sglangCommand'] as const) {
    if (engine?.[field] !== undefined && typeof engine[field] !== 'string') {
      throw new AppError(ErrorCode.InvalidInput, `${file}: field "engine.${field}" must be a string`);
    }
  }
  const roots = (parsed as UserConfig).roots;
  if (roots !== undefined && (typeof roots !== 'object' || roots === null || Array.isArray(roots))) {
    throw new AppError(ErrorCode.InvalidInput, `${file}: field "roots" must be an object like {"models": ["/data/models"]}`);
  }
  for (const field of ['models', 'workloads', 'results'] as const) {
    const list = roots?.[field];
    if (list !== undefined && (!Array.isArray(list) || list.some((entry) => typeof entry !== 'string' || !path.isAbsolute(entry)))) {
      throw new AppError(ErrorCode.InvalidInput, `${file}: field "roots.${field}" must be a list of absolute folder paths`);
    }
  }
  const endpoints = roots?.endpoints;
  if (endpoints !== undefined && (!Array.isArray(endpoints) || endpoints.some((entry) => !isHttpUrl(entry))))
    throw new AppError(
      ErrorCode.InvalidInput,
      `${file}: field "roots.endpoints" must be a list of http(s) URLs like "http://gpu-box:8000"`,
    );
  const keys = (parsed as UserConfig).endpointKeys;
  if (keys !== undefined) {
    if (!Array.isArray(keys))
      throw new AppError(ErrorCode.InvalidInput, `${file}: field "endpointKeys" must be a list of {"endpoint": URL, "env": VARIABLE}`);
    keys.forEach((entry, index) => {
      const where = `${file}: endpointKeys[${index}]`;
      if (typeof entry !== 'object' || entry === null)
        throw new AppError(ErrorCode.InvalidInput, `${where} must be {"endpoint": URL, "env": VARIABLE}`);
      if (typeof entry.env !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(entry.env))
        throw new AppError(ErrorCode.InvalidInput, `${where}.env must name an environment variable, got ${JSON.stringify(entry.env)}`);
      if (!isHttpUrl(entry.endpoint))
        throw new AppError(ErrorCode.InvalidInput, `${where}.endpoint must be an http(s) URL, got ${JSON.stringify(entry.endpoint)}`);
    });
  }
  const ui = (parsed as UserConfig).ui;
  if (ui !== undefined && (typeof ui !== 'object' || ui === null || Array.isArray(ui)))
    throw new AppError(ErrorCode.InvalidInput, `${file}: field "ui" must be an object`);
  for (const field of ['decisionName', 'defaultProfile'] as const) {
    if (ui?.[field] !== undefined && typeof ui[field] !== 'string')
      throw new AppError(ErrorCode.InvalidInput, `${file}: field "ui.${field}" must be a string`);
  }
  const interval = (parsed as UserConfig).telemetry?.intervalMs;
  const range = TELEMETRY_INTERVAL_RANGE_MS;
  if (interval !== undefined && !(Number.isInteger(interval) && interval >= range.min && interval <= range.max))
    throw new AppError(
      ErrorCode.InvalidInput,
      `${file}: field "telemetry.intervalMs" must be a whole number of ms from ${range.min} to ${range.max}, got ${JSON.stringify(interval)}`,
    );
  return parsed as UserConfig;
}

/**
 * How often a run's telemetry samples: INFERLAB_TELEMETRY_INTERVAL_MS where set (a GPU box run from
 * a script, without touching its config file), else the config file's telemetry.intervalMs, else 250 ms.
 */
export function telemetryIntervalMs(env: NodeJS.ProcessEnv = process.env): number {
  const range = TELEMETRY_INTERVAL_RANGE_MS;
  const fromEnv = env.INFERLAB_TELEMETRY_INTERVAL_MS;
  if (fromEnv === undefined || fromEnv === '') return readUserConfig(env).telemetry?.intervalMs ?? range.default;
  const value = /^\d+$/.test(fromEnv) ? Number(fromEnv) : Number.NaN;
  if (!(value >= range.min && value <= range.max))
    throw new AppError(
      ErrorCode.InvalidInput,
      `INFERLAB_TELEMETRY_INTERVAL_MS must be a whole number of ms from ${range.min} to ${range.max}, got ${JSON.stringify(fromEnv)}; unset it to use the config file's`,
    );
  return value;
}

/**
 * Saves changes to the config file, keeping every field it does not change. Written to a
 * temporary file and renamed, so a crash never leaves half a file; the result is read back
 * through the same checks as at start.
 */
export function updateUserConfig(change: (config: UserConfig) => UserConfig, env: NodeJS.ProcessEnv = process.env): UserConfig {
  const file = userConfigPath(env);
  const next = change(readUserConfig(env));
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
  fs.renameSync(temporary, file);
  return readUserConfig(env);
}

function isHttpUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}
