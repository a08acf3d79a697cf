import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensurePrivateDir, PRIVATE_DIR_MODE, restrict } from './private-files';

/**
 * Per-user locations. Environment overrides come first so tests and CI can isolate
 * themselves; otherwise the platform's conventional folders.
 */
export function userDataDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.INFERLAB_DATA_DIR) return path.resolve(env.INFERLAB_DATA_DIR);
  const home = os.homedir();
  if (process.platform === 'darwin') return path.join(home, 'Library', 'Application Support', 'InferLab');
  if (process.platform === 'win32') return path.join(env.APPDATA ?? path.join(home, 'AppData', 'Roaming'), 'InferLab');
  return path.join(env.XDG_DATA_HOME ?? path.join(home, '.local', 'share'), 'inferlab');
}

export function userCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.INFERLAB_CACHE_DIR) return path.resolve(env.INFERLAB_CACHE_DIR);
  const home = os.homedir();
  if (process.platform === 'darwin') return path.join(home, 'Library', 'Caches', 'InferLab');
  if (process.platform === 'win32') return path.join(env.LOCALAPPDATA ?? path.join(home, 'AppData', 'Local'), 'InferLab', 'Cache');
  return path.join(env.XDG_CACHE_HOME ?? path.join(home, '.cache'), 'inferlab');
}

/**
 * The data folder (runs, prompts, outputs, logs, the serve token) and the cache folder
 * (engine builds) are owner-only, created so or tightened if an older version left them open.
 */
export function secureAppDirs(env: NodeJS.ProcessEnv = process.env): void {
  for (const dir of [userDataDir(env), userCacheDir(env)]) {
    try {
      ensurePrivateDir(dir);
      restrict(dir, PRIVATE_DIR_MODE);
    } catch {
      // A read-only home or a foreign folder: the command that needs it reports the problem.
    }
  }
}

/** `--db PATH`, else `INFERLAB_DB`, else the per-user data folder (docs/ARCHITECTURE.md). */
export function resolveDatabasePath(explicit: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  if (explicit) return path.resolve(explicit);
  if (env.INFERLAB_DB) return path.resolve(env.INFERLAB_DB);
  return path.join(userDataDir(env), 'inferlab.db');
}

export function demoModelsDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(userDataDir(env), 'demo-models');
}

export function engineCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(userCacheDir(env), 'engine');
}

/**
 * The installed package's root: the nearest folder above this module holding our
 * package.json. Searched rather than fixed because the module runs both from source
 * (src/main/core) and bundled (out/main).
 */
export function projectRoot(): string {
  let dir = import.meta.dirname;
  for (;;) {
    const manifest = path.join(dir, 'package.json');
    if (fs.existsSync(manifest) && JSON.parse(fs.readFileSync(manifest, 'utf8')).name === 'inferlab') return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`Cannot find the inferlab package root above ${import.meta.dirname}`);
    dir = parent;
  }
}
