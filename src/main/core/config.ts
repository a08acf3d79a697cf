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
}

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
  return parsed as UserConfig;
}
