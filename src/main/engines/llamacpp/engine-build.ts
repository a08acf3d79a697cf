import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { EngineBackend } from '../../../shared/contract/engine';
import { ErrorCode } from '../../../shared/errors';
import { AppError } from '../../core/errors';
import { acquireFileLock } from '../../core/lock';
import { runToCompletion } from '../../core/process';
import { findExecutable } from '../../core/which';
import { cmakeFlagsFor, findNvcc } from './backend';
import { ensurePinnedSource, readPinnedSourceRecord } from './engine-source';

/** The binaries Infer Lab uses; the server is required, the tools power quantize/bench/KLD. */
export const ENGINE_BINARIES = ['llama-server', 'llama-quantize', 'llama-bench', 'llama-perplexity'] as const;

export interface ManagedBuild {
  commit: string;
  backend: EngineBackend;
  binDir: string;
  builtAt: string;
  buildSeconds: number;
}

export interface BuildProgress {
  step(index: number, total: number, label: string): void;
  percent(value: number): void;
  info(line: string): void;
}

export interface MissingPrerequisite {
  what: string;
  fix: string;
}

const BASE_CMAKE_FLAGS = [
  '-DCMAKE_BUILD_TYPE=Release',
  // Static binaries: the cached folder stays self-contained and relocatable.
  '-DBUILD_SHARED_LIBS=OFF',
  '-DLLAMA_BUILD_TESTS=OFF',
  '-DLLAMA_BUILD_EXAMPLES=OFF',
  '-DLLAMA_BUILD_TOOLS=ON',
  '-DLLAMA_BUILD_SERVER=ON',
  '-DLLAMA_BUILD_APP=OFF',
  // The web UI would be downloaded at configure time, and the server runs with --no-webui.
  '-DLLAMA_USE_PREBUILT_UI=OFF',
  '-DLLAMA_BUILD_UI=OFF',
  // Model downloads are the app's job, not the engine's.
  '-DLLAMA_OPENSSL=OFF',
  '-DLLAMA_CURL=OFF',
  // The cache is per user and per machine, so tune for this CPU.
  '-DGGML_NATIVE=ON',
];

function backendDir(engineDir: string, commit: string, backend: EngineBackend): string {
  return path.join(engineDir, `llama.cpp-${commit.slice(0, 12)}`, backend);
}

function markerPath(dir: string): string {
  return path.join(dir, 'build.json');
}

function readMarker(dir: string): ManagedBuild | null {
  try {
    const marker = JSON.parse(fs.readFileSync(markerPath(dir), 'utf8')) as ManagedBuild;
    const complete = ENGINE_BINARIES.every((name) => fs.existsSync(path.join(marker.binDir, name)));
    return complete ? marker : null;
  } catch {
    return null;
  }
}

/**
 * The cached build for the pinned source and this backend, or null. Reads two small JSON
 * files and stats four binaries: this is the fast path every command takes.
 */
export function findCachedBuild(engineDir: string, backend: EngineBackend): ManagedBuild | null {
  const record = readPinnedSourceRecord(engineDir);
  return record ? readMarker(backendDir(engineDir, record.commit, backend)) : null;
}

/** Any cached build of the pinned source, preferring `preferred`. */
export function findAnyCachedBuild(engineDir: string, preferred: EngineBackend): ManagedBuild | null {
  const order: EngineBackend[] = [preferred, 'cuda', 'vulkan', 'metal', 'cpu'];
  for (const backend of order) {
    const build = findCachedBuild(engineDir, backend);
    if (build) return build;
  }
  return null;
}

export function missingBuildPrerequisites(backend: EngineBackend, env: NodeJS.ProcessEnv = process.env): MissingPrerequisite[] {
  const debian = fs.existsSync('/etc/debian_version');
  const install = (pkgs: string, brew: string) =>
    process.platform === 'darwin' ? brew : debian ? `apt-get install -y ${pkgs}` : `install ${pkgs} with your package manager`;
  const missing: MissingPrerequisite[] = [];
  if (!findExecutable('cmake', env)) missing.push({ what: 'cmake (3.14 or newer)', fix: install('cmake', 'brew install cmake') });
  const compiler = env.CXX
    ? findExecutable(env.CXX, env)
    : (findExecutable('c++', env) ?? findExecutable('g++', env) ?? findExecutable('clang++', env));
  if (!compiler) missing.push({ what: 'a C++17 compiler (g++ or clang++)', fix: install('g++ make', 'xcode-select --install') });
  if (!findExecutable('git', env))
    missing.push({ what: 'git (to unpack the llama.cpp source bundle)', fix: install('git', 'xcode-select --install') });
  if (!findExecutable('tar', env)) missing.push({ what: 'tar', fix: install('tar', 'xcode-select --install') });
  if (backend === 'cuda' && !findNvcc())
    missing.push({ what: 'the CUDA toolkit (nvcc) for --backend cuda', fix: 'install the CUDA toolkit, or use --backend cpu' });
  return missing;
}

/**
 * Builds llama-server and its tools for `backend` from the pinned source, unless a complete
 * build is already cached. A file lock makes concurrent installs wait for one build.
 */
export async function ensureManagedBuild(options: {
  engineDir: string;
  backend: EngineBackend;
  force?: boolean;
  progress: BuildProgress;
  /** Stops the build: cmake is killed, nothing is installed into the cache. */
  signal?: AbortSignal;
}): Promise<ManagedBuild & { reused: boolean }> {
  const { engineDir, backend, progress, signal } = options;
  const stopIfCancelled = () => {
    if (signal?.aborted) throw new AppError(ErrorCode.EngineBuildFailed, 'The engine build was cancelled; nothing was installed');
  };
  if (!options.force) {
    const cached = findCachedBuild(engineDir, backend);
    if (cached) return { ...cached, reused: true };
  }
  const missing = missingBuildPrerequisites(backend);
  if (missing.length > 0) {
    throw new AppError(
      ErrorCode.EngineMissing,
      `Cannot build llama.cpp: missing ${missing.map((item) => item.what).join(', ')}.\n${missing.map((item) => `  fix: ${item.fix}`).join('\n')}\nthen run: ./bin/inferlab setup`,
      { missing },
    );
  }
  const lock = await acquireFileLock(path.join(engineDir, 'build.lock'), {
    timeoutMs: 90 * 60_000,
    onWait: (pid) => progress.info(`another install (pid ${pid}) is building the engine; waiting for it`),
  });
  try {
    if (!options.force) {
      const builtMeanwhile = findCachedBuild(engineDir, backend);
      if (builtMeanwhile) return { ...builtMeanwhile, reused: true };
    }
    const started = Date.now();
    progress.step(1, 4, 'llama.cpp source');
    const { commit, sourceDir } = await ensurePinnedSource(engineDir, (line) => progress.info(line));
    const dir = backendDir(engineDir, commit, backend);
    const buildDir = path.join(dir, 'build');

    progress.step(2, 4, `configure (${backend})`);
    stopIfCancelled();
    const configure = await runToCompletion('cmake', ['-S', sourceDir, '-B', buildDir, ...BASE_CMAKE_FLAGS, ...cmakeFlagsFor(backend)], {
      signal,
    });
    stopIfCancelled();
    if (configure.code !== 0) throw buildFailure('configure', configure.output);

    progress.step(3, 4, `compile ${ENGINE_BINARIES.join(' ')} on ${os.availableParallelism()} cores`);
    let lastPercent = -1;
    const compile = await runToCompletion(
      'cmake',
      ['--build', buildDir, '--config', 'Release', '-j', String(os.availableParallelism()), '--target', ...ENGINE_BINARIES],
      {
        signal,
        onLine: (line) => {
          const match = /^\[\s*(\d+)%\]/.exec(line);
          if (match) {
            const percent = Number(match[1]);
            if (percent !== lastPercent) progress.percent((lastPercent = percent));
          }
        },
      },
    );
    stopIfCancelled();
    if (compile.code !== 0) throw buildFailure('compile', compile.output);

    progress.step(4, 4, 'install into the cache');
    const binDir = path.join(dir, 'bin');
    const staging = `${binDir}.staging`;
    fs.rmSync(staging, { recursive: true, force: true });
    fs.mkdirSync(staging, { recursive: true });
    for (const name of ENGINE_BINARIES) {
      const built = path.join(buildDir, 'bin', name);
      if (!fs.existsSync(built)) throw buildFailure('install', `the build did not produce ${built}`);
      fs.copyFileSync(built, path.join(staging, name));
      fs.chmodSync(path.join(staging, name), 0o755);
    }
    // Until here a cached build stays usable: a cancelled or failed rebuild leaves it as it was.
    fs.rmSync(markerPath(dir), { force: true });
    fs.rmSync(binDir, { recursive: true, force: true });
    fs.renameSync(staging, binDir);
    const build: ManagedBuild = {
      commit,
      backend,
      binDir,
      builtAt: new Date().toISOString(),
      buildSeconds: Math.round((Date.now() - started) / 1000),
    };
    fs.writeFileSync(markerPath(dir), JSON.stringify(build, null, 2));
    return { ...build, reused: false };
  } finally {
    lock.release();
  }
}

function buildFailure(stage: string, output: string): AppError {
  const tail = output.split('\n').slice(-30).join('\n');
  return new AppError(ErrorCode.EngineBuildFailed, `Building llama.cpp failed at ${stage}:\n${tail}`);
}
