import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { EngineBackend } from '../../../shared/contract/engine';
import { ErrorCode } from '../../../shared/errors';
import { AppError } from '../../core/errors';
import { acquireFileLock } from '../../core/lock';
import { runToCompletion } from '../../core/process';
import { findExecutable } from '../../core/which';
import { cmakeFlagsFor, findNvcc, TOOL_CMAKE_FLAGS } from './backend';
import type { EnginePlan } from './engine-plan';
import { smokeTestEngine, type SmokeResult } from './engine-smoke';
import { ensurePinnedSource, readPinnedSourceRecord } from './engine-source';

/** The libraries an engine's folder carries beside its binaries: Linux's shared objects, a Mac's dylibs (and its backend modules, named .so). */
export const ENGINE_LIBRARY = /\.so(\.\d+)*$|\.dylib$/;

/** The binaries Infer Lab uses; the server is required, the tools power quantize/bench/KLD. */
export const ENGINE_BINARIES = ['llama-server', 'llama-quantize', 'llama-bench', 'llama-perplexity'] as const;

export interface ManagedBuild {
  commit: string;
  backend: EngineBackend;
  binDir: string;
  builtAt: string;
  buildSeconds: number;
  /** Compiled on a prebuilt package's libraries, or all of llama.cpp from source. Absent in older caches: source. */
  route?: EngineRoute;
  /** The prebuilt packages the engine's libraries came from; [] for a source build. */
  packages?: { name: string; version: string }[];
  /** What the smoke test proved right after the build; null for builds made before it existed. */
  smoke?: SmokeResult | null;
  /** Why this is a source build although the plan was a prebuilt one. */
  fallbackReason?: string | null;
}

export type EngineRoute = 'prebuilt' | 'source';

export interface EngineBuildOutcome extends ManagedBuild {
  reused: boolean;
  /** Things the person must hear: a GPU machine left with a CPU engine, a fallback. */
  warnings: string[];
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
  ...TOOL_CMAKE_FLAGS,
  // The cache is per user and per machine, so tune for this CPU.
  '-DGGML_NATIVE=ON',
];

function backendDir(engineDir: string, commit: string, backend: EngineBackend, route: EngineRoute = 'source'): string {
  return path.join(engineDir, `llama.cpp-${commit.slice(0, 12)}`, route === 'source' ? backend : `${backend}-prebuilt`);
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
export function findCachedBuild(engineDir: string, backend: EngineBackend, route?: EngineRoute): ManagedBuild | null {
  const record = readPinnedSourceRecord(engineDir);
  if (!record) return null;
  const routes: EngineRoute[] = route ? [route] : ['prebuilt', 'source'];
  const builds = routes
    .map((each) => readMarker(backendDir(engineDir, record.commit, backend, each)))
    .filter((build): build is ManagedBuild => build !== null);
  // Both routes cached: the one built last is the one the person chose last.
  return builds.sort((a, b) => b.builtAt.localeCompare(a.builtAt))[0] ?? null;
}

/**
 * The managed build a llama-server path belongs to (a path configured to a cached build, or a
 * baseline's recorded build), so that its backend and route stay known; null for any other binary.
 */
export function managedBuildOf(serverPath: string): ManagedBuild | null {
  const binDir = path.dirname(path.resolve(serverPath));
  const marker = readMarker(path.dirname(binDir));
  return marker && path.resolve(marker.binDir) === binDir ? marker : null;
}

/** Any cached build of the pinned source: `preferred` first, then GPU backends before the CPU. */
export function findAnyCachedBuild(engineDir: string, preferred?: EngineBackend): ManagedBuild | null {
  const order: EngineBackend[] = [...(preferred ? [preferred] : []), 'cuda', 'vulkan', 'metal', 'cpu'];
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
  if (backend === 'vulkan' && !findExecutable('glslc', env))
    missing.push({
      what: 'the Vulkan SDK shader compiler (glslc) for --backend vulkan',
      fix: install('glslc libvulkan-dev', 'brew install shaderc vulkan-loader'),
    });
  return missing;
}

interface BuildOptions {
  engineDir: string;
  force?: boolean;
  progress: BuildProgress;
  /** Stops the build: cmake is killed, nothing is installed into the cache. */
  signal?: AbortSignal;
  /** A model for the smoke test, made with the candidate engine's llama-quantize if need be. */
  smokeModel: (quantizeBinary: string) => Promise<string>;
  env?: NodeJS.ProcessEnv;
}

type SourceBuilder = (
  options: BuildOptions & { backend: EngineBackend; fallbackReason: string | null },
) => Promise<ManagedBuild & { reused: boolean }>;

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Makes sure the planned engine is built and cached, and proven by a smoke test. A prebuilt
 * plan that fails at any step (package missing, libraries that do not load, smoke test)
 * falls back to the full source build and says why; a cached build is never rebuilt.
 */
export async function ensureEngineBuild(
  options: BuildOptions & { plan: EnginePlan; buildFromSource?: SourceBuilder },
): Promise<EngineBuildOutcome> {
  const { plan, progress } = options;
  const warnings = [...plan.warnings];
  const fromSource = options.buildFromSource ?? ensureSourceBuild;
  if (plan.route === 'source') return { ...(await fromSource({ ...options, backend: plan.backend, fallbackReason: null })), warnings };
  try {
    return { ...(await ensurePrebuiltBuild({ ...options, plan })), warnings };
  } catch (error) {
    if (options.signal?.aborted) throw error;
    const reason = message(error);
    const backend = missingBuildPrerequisites(plan.backend, options.env).length === 0 ? plan.backend : 'cpu';
    progress.info(`the prebuilt ${plan.backend} engine failed: ${reason}`);
    progress.info(`falling back to building all of llama.cpp from source (${backend})`);
    warnings.push(`Built from source because the prebuilt ${plan.backend} engine failed: ${reason.split('\n')[0]}`);
    if (plan.backend !== 'cpu' && backend === 'cpu')
      warnings.push(
        `THE ENGINE WILL RUN ON THE CPU although this machine was planned for ${plan.backend}: the prebuilt ${plan.backend} engine failed and ${plan.backend} cannot be built from source here (${missingBuildPrerequisites(
          plan.backend,
          options.env,
        )
          .map((item) => item.what)
          .join(', ')} missing). Every run will record gpu_offload: none.`,
      );
    return { ...(await fromSource({ ...options, backend, fallbackReason: reason })), warnings };
  }
}

async function withBuildLock<T>(engineDir: string, progress: BuildProgress, work: () => Promise<T>): Promise<T> {
  const lock = await acquireFileLock(path.join(engineDir, 'build.lock'), {
    timeoutMs: 90 * 60_000,
    onWait: (pid) => progress.info(`another install (pid ${pid}) is building the engine; waiting for it`),
  });
  try {
    return await work();
  } finally {
    lock.release();
  }
}

/**
 * Copies the built binaries and the libraries beside them into `dir/bin`, smoke-tests the
 * copy, and only then replaces the cached build: a cancelled, failed or unproven build
 * leaves the cached one as it was.
 */
async function installProven(
  options: BuildOptions & {
    dir: string;
    builtBin: string;
    backend: EngineBackend;
    build: Omit<ManagedBuild, 'binDir' | 'smoke' | 'builtAt'>;
  },
): Promise<ManagedBuild> {
  const { dir, builtBin } = options;
  const binDir = path.join(dir, 'bin');
  const staging = `${binDir}.staging`;
  fs.rmSync(staging, { recursive: true, force: true });
  fs.mkdirSync(staging, { recursive: true });
  for (const name of fs.readdirSync(builtBin)) {
    const from = path.join(builtBin, name);
    const stat = fs.lstatSync(from);
    const wanted = (ENGINE_BINARIES as readonly string[]).includes(name) || ENGINE_LIBRARY.test(name);
    if (!wanted) continue;
    if (stat.isSymbolicLink()) fs.symlinkSync(fs.readlinkSync(from), path.join(staging, name));
    else if (stat.isFile()) fs.copyFileSync(from, path.join(staging, name));
  }
  for (const name of ENGINE_BINARIES) {
    if (!fs.existsSync(path.join(staging, name))) throw buildFailure('install', `the build did not produce ${path.join(builtBin, name)}`);
    fs.chmodSync(path.join(staging, name), 0o755);
  }
  const model = await options.smokeModel(path.join(staging, 'llama-quantize'));
  const smoke = await smokeTestEngine({ binDir: staging, backend: options.backend, model, log: (line) => options.progress.info(line) });
  fs.rmSync(markerPath(dir), { force: true });
  fs.rmSync(binDir, { recursive: true, force: true });
  fs.renameSync(staging, binDir);
  const build: ManagedBuild = { ...options.build, binDir, builtAt: new Date().toISOString(), smoke };
  fs.writeFileSync(markerPath(dir), JSON.stringify(build, null, 2));
  return build;
}

async function ensurePrebuiltBuild(
  options: BuildOptions & { plan: Extract<EnginePlan, { route: 'prebuilt' }> },
): Promise<ManagedBuild & { reused: boolean }> {
  const { engineDir, plan, progress } = options;
  if (!options.force) {
    const cached = findCachedBuild(engineDir, plan.backend, 'prebuilt');
    if (cached) return { ...cached, reused: true };
  }
  return withBuildLock(engineDir, progress, async () => {
    if (!options.force) {
      const builtMeanwhile = findCachedBuild(engineDir, plan.backend, 'prebuilt');
      if (builtMeanwhile) return { ...builtMeanwhile, reused: true };
    }
    const started = Date.now();
    progress.step(1, 4, 'llama.cpp source');
    const { commit, sourceDir } = await ensurePinnedSource(engineDir, (line) => progress.info(line), options.signal);
    const dir = backendDir(engineDir, commit, plan.backend, 'prebuilt');
    progress.step(2, 4, `prebuilt ${plan.backend} libraries`);
    const { buildOnPrebuiltLibraries } = await import('./prebuilt-build');
    let announced = false;
    const built = await buildOnPrebuiltLibraries({
      engineDir,
      sourceDir,
      dir,
      backend: plan.backend,
      composition: plan.composition,
      cudaRuntime: plan.cudaRuntime,
      signal: options.signal,
      env: options.env,
      progress: {
        info: (line) => progress.info(line),
        percent: (value) => {
          if (!announced)
            progress.step(3, 4, `compile ${ENGINE_BINARIES.join(' ')} on the prebuilt libraries (${os.availableParallelism()} cores)`);
          announced = true;
          progress.percent(value);
        },
      },
    });
    progress.step(4, 4, 'smoke test and install into the cache');
    const build = await installProven({
      ...options,
      dir,
      builtBin: built.binDir,
      backend: plan.backend,
      build: {
        commit,
        backend: plan.backend,
        buildSeconds: Math.round((Date.now() - started) / 1000),
        route: 'prebuilt',
        packages: built.packages.map(({ name, version }) => ({ name, version })),
        fallbackReason: null,
      },
    });
    return { ...build, reused: false };
  });
}

/** Builds all of llama.cpp for `backend` from the pinned source, unless that build is cached. */
export const ensureSourceBuild: SourceBuilder = async (options) => {
  const { engineDir, backend, progress, signal } = options;
  const stopIfCancelled = () => {
    if (signal?.aborted) throw new AppError(ErrorCode.EngineBuildFailed, 'The engine build was cancelled; nothing was installed');
  };
  if (!options.force) {
    const cached = findCachedBuild(engineDir, backend, 'source');
    if (cached) return { ...cached, reused: true };
  }
  const missing = missingBuildPrerequisites(backend, options.env);
  if (missing.length > 0) {
    throw new AppError(
      ErrorCode.EngineMissing,
      `Cannot build llama.cpp: missing ${missing.map((item) => item.what).join(', ')}.\n${missing.map((item) => `  fix: ${item.fix}`).join('\n')}\nthen run: ./bin/inferlab setup`,
      { missing },
    );
  }
  return withBuildLock(engineDir, progress, async () => {
    if (!options.force) {
      const builtMeanwhile = findCachedBuild(engineDir, backend, 'source');
      if (builtMeanwhile) return { ...builtMeanwhile, reused: true };
    }
    const started = Date.now();
    progress.step(1, 4, 'llama.cpp source');
    const { commit, sourceDir } = await ensurePinnedSource(engineDir, (line) => progress.info(line), options.signal);
    const dir = backendDir(engineDir, commit, backend, 'source');
    const buildDir = path.join(dir, 'build');

    progress.step(2, 4, `configure (${backend})`);
    stopIfCancelled();
    const configure = await runToCompletion('cmake', ['-S', sourceDir, '-B', buildDir, ...BASE_CMAKE_FLAGS, ...cmakeFlagsFor(backend)], {
      signal,
      env: options.env,
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
        env: options.env,
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

    progress.step(4, 4, 'smoke test and install into the cache');
    const build = await installProven({
      ...options,
      dir,
      builtBin: path.join(buildDir, 'bin'),
      backend,
      build: {
        commit,
        backend,
        buildSeconds: Math.round((Date.now() - started) / 1000),
        route: 'source',
        packages: [],
        fallbackReason: options.fallbackReason,
      },
    });
    return { ...build, reused: false };
  });
};

function buildFailure(stage: string, output: string): AppError {
  const tail = output.split('\n').slice(-30).join('\n');
  return new AppError(ErrorCode.EngineBuildFailed, `Building llama.cpp failed at ${stage}:\n${tail}`);
}
