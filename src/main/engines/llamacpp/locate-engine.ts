import path from 'node:path';
import type { EngineBackend, EngineBuildFacts, EngineInfo } from '../../../shared/contract/engine';
import { ErrorCode } from '../../../shared/errors';
import { AppError } from '../../core/errors';
import { readUserConfig } from '../../core/config';
import { engineCacheDir } from '../../core/paths';
import { findExecutable, isExecutable } from '../../core/which';
import { findAnyCachedBuild, managedBuildOf, type ManagedBuild } from './engine-build';
import { readServerVersion } from './server-version';

export interface EngineLookup {
  engine: EngineInfo | null;
  /** Why nothing was found, or why a configured path was passed over. */
  problems: string[];
}

/**
 * Finds llama-server: the configured path (INFERLAB_LLAMA_SERVER, else config.json), else
 * PATH, else the app-managed build. A configured path that is not executable is an error
 * to report, not something to silently replace.
 */
export async function locateEngine(env: NodeJS.ProcessEnv = process.env, preferredBackend?: EngineBackend): Promise<EngineLookup> {
  const problems: string[] = [];
  const configured = env.INFERLAB_LLAMA_SERVER || readUserConfig(env).engine?.llamaServerPath;
  if (configured) {
    if (isExecutable(configured)) {
      const managed = managedBuildOf(configured);
      if (!managed) return { engine: await describe('configured', path.resolve(configured), null), problems };
      return { engine: await describeManaged('configured', managed), problems };
    }
    return {
      engine: null,
      problems: [
        `the configured llama-server (${configured}) is missing or not executable; fix the path or remove it to use the managed build`,
      ],
    };
  }
  const onPath = findExecutable('llama-server', env);
  if (onPath) return { engine: await describe('path', onPath, null), problems };
  const managed = findAnyCachedBuild(engineCacheDir(env), preferredBackend);
  if (managed) return { engine: await describeManaged('managed', managed), problems };
  problems.push('no llama-server configured, on PATH, or built in the cache');
  return { engine: null, problems };
}

async function describe(origin: EngineInfo['origin'], serverPath: string, backend: EngineBackend | null): Promise<EngineInfo> {
  const { version, commit } = await readServerVersion(serverPath);
  return { origin, serverPath, toolsDir: path.dirname(serverPath), version, commit, backend, build: null };
}

async function describeManaged(origin: EngineInfo['origin'], managed: ManagedBuild): Promise<EngineInfo> {
  const info = await describe(origin, path.join(managed.binDir, 'llama-server'), managed.backend);
  return { ...info, commit: info.commit ?? managed.commit.slice(0, 7), build: buildFacts(managed) };
}

export function buildFacts(build: ManagedBuild): EngineBuildFacts {
  return {
    route: build.route ?? 'source',
    packages: build.packages ?? [],
    cpuVariant: build.smoke?.cpuVariant ?? null,
    gpuLibrary: build.smoke?.gpuLibrary ?? null,
    fallbackReason: build.fallbackReason ?? null,
  };
}

export function toolPath(engine: EngineInfo, tool: 'llama-quantize' | 'llama-bench' | 'llama-perplexity'): string | null {
  const candidate = path.join(engine.toolsDir, tool);
  return isExecutable(candidate) ? candidate : findExecutable(tool);
}

/** The engine, or an error that says how to get one. */
export async function requireEngine(env: NodeJS.ProcessEnv = process.env): Promise<EngineInfo> {
  const { engine, problems } = await locateEngine(env);
  if (!engine) throw new AppError(ErrorCode.EngineMissing, `No llama-server: ${problems.join('; ')}. Run ./bin/inferlab setup first.`);
  return engine;
}
