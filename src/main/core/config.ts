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
  if (engine?.llamaServerPath !== undefined && typeof engine.llamaServerPath !== 'string') {
    throw new AppError(ErrorCode.InvalidInput, `${file}: field "engine.llamaServerPath" must be a string path`);
  }
  return parsed as UserConfig;
}
