import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, type TestContext } from 'vitest';
import type { EngineInfo } from '../../src/shared/contract/engine';
import { engineCacheDir } from '../../src/main/core/paths';
import { runToCompletion } from '../../src/main/core/process';
import { ensureEngineBuild, type BuildProgress, type ManagedBuild } from '../../src/main/engines/llamacpp/engine-build';
import type { EnginePlan } from '../../src/main/engines/llamacpp/engine-plan';
import { smokeTestEngine } from '../../src/main/engines/llamacpp/engine-smoke';
import { PINNED_SOURCE, readPinnedSourceRecord, sourceDirFor } from '../../src/main/engines/llamacpp/engine-source';
import { packPinnedPackage } from '../../src/main/engines/llamacpp/pinned-package';
import { compositionFor, compositionPackages, PREBUILT_PACKAGES } from '../../src/main/engines/llamacpp/prebuilt-packages';
import { resolveModelRef } from '../../src/main/models/demo-models';
import { requireEngine } from '../support/engine';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();
const linuxX64 = process.platform === 'linux' && process.arch === 'x64';

function quietProgress(lines: string[]): BuildProgress {
  return { step: (_index, _total, label) => lines.push(label), percent: () => {}, info: (line) => lines.push(line) };
}

/** A copy of the engine's folder (binaries and libraries) that a test may break. */
function copyOfEngine(binDir: string): string {
  const copy = tempDir();
  for (const name of fs.readdirSync(binDir)) {
    const from = path.join(binDir, name);
    if (fs.lstatSync(from).isSymbolicLink()) fs.symlinkSync(fs.readlinkSync(from), path.join(copy, name));
    else fs.copyFileSync(from, path.join(copy, name));
  }
  for (const name of ['llama-server', 'llama-quantize', 'llama-bench', 'llama-perplexity']) fs.chmodSync(path.join(copy, name), 0o755);
  return copy;
}

/** An engine cache that has the pinned source (linked from the real cache) and nothing built. */
function cacheWithSourceOnly(): string {
  const real = engineCacheDir();
  const record = readPinnedSourceRecord(real);
  if (!record) throw new Error('The pinned llama.cpp source is not in the cache. Run ./bin/inferlab setup.');
  const dir = tempDir();
  const recordName = `${PINNED_SOURCE.packageName}-${PINNED_SOURCE.version}.json`;
  fs.copyFileSync(path.join(real, recordName), path.join(dir, recordName));
  const source = sourceDirFor(dir, record.commit);
  fs.mkdirSync(path.dirname(source), { recursive: true });
  fs.symlinkSync(sourceDirFor(real, record.commit), source);
  return dir;
}

/** npm with an empty cache and no network: every package is unavailable, quickly. */
function offlineNpmEnv(): NodeJS.ProcessEnv {
  return { ...process.env, npm_config_cache: tempDir(), npm_config_offline: 'true', npm_config_fetch_retries: '0' };
}

/** The managed engine, or a skip that says why: the cases below are about the build setup makes. */
async function managedEngineOrSkip(context: TestContext) {
  const engine = await requireEngine();
  if (engine.origin !== 'managed' || !engine.backend)
    context.skip(`the suite runs on a ${engine.origin} llama-server (${engine.serverPath}), not a managed build`);
  return engine;
}

function cudaMajorOf(engine: EngineInfo): 12 | 13 | null {
  if (engine.backend !== 'cuda') return null;
  return engine.build?.packages.some((item) => item.name.endsWith('-cuda-ext')) ? 12 : 13;
}

describe.skipIf(!linuxX64)('the engine compiled on prebuilt libraries', () => {
  it('is the engine this suite runs on, proven by its smoke test and naming what it loaded', async (context) => {
    const engine = await managedEngineOrSkip(context);
    if (engine.build?.route !== 'prebuilt')
      context.skip(`this engine was built from source (${engine.build?.fallbackReason ?? 'asked for'})`);
    // The packages the backend's composition names, in order: the CPU package alone, or it with a GPU package.
    const composition = compositionFor(engine.backend!, process.platform, process.arch, cudaMajorOf(engine));
    expect(composition, `no prebuilt composition for ${engine.backend}`).not.toBeNull();
    expect(engine.build).toMatchObject({
      route: 'prebuilt',
      packages: compositionPackages(composition!).map((item) => ({ name: item.name, version: PINNED_SOURCE.version })),
    });
    expect(engine.build?.cpuVariant).toMatch(/^[a-z0-9_-]+$/);
    // Every library the server needs resolves inside the engine's own folder (the $ORIGIN run path).
    const ldd = await runToCompletion('ldd', [engine.serverPath]);
    const own = ldd.output.split('\n').filter((line) => /lib(llama|ggml|mtmd)/.test(line));
    expect(own.length).toBeGreaterThanOrEqual(4);
    for (const line of own) expect(line).toContain(`=> ${engine.toolsDir}/`);
    expect(ldd.output).not.toMatch(/not found/);

    const smoke = await smokeTestEngine({ binDir: engine.toolsDir, backend: engine.backend!, model: await resolveModelRef('demo:q8_0') });
    expect(smoke.tokensGenerated).toBeGreaterThan(0);
    expect(smoke.cpuVariant).toBe(engine.build?.cpuVariant);
  });

  it('fails its smoke test when a library is missing, naming the tool and the library', async (context) => {
    const engine = await managedEngineOrSkip(context);
    const broken = copyOfEngine(engine.toolsDir);
    fs.rmSync(path.join(broken, 'libllama-common.so'));
    await expect(smokeTestEngine({ binDir: broken, backend: engine.backend!, model: await resolveModelRef('demo:q8_0') })).rejects.toThrow(
      /smoke test failed: llama-quantize does not start[\s\S]*libllama-common\.so/,
    );
  });

  it('refuses a GPU engine that loads no GPU backend and offloads nothing', async (context) => {
    const engine = await managedEngineOrSkip(context);
    if (engine.backend !== 'cpu')
      context.skip(`the case asks a CPU engine to pass as a CUDA one; this machine's engine is a ${engine.backend} build`);
    // The CPU engine asked to prove itself as a CUDA engine: exactly a CUDA package whose runtime did not load.
    await expect(smokeTestEngine({ binDir: engine.toolsDir, backend: 'cuda', model: await resolveModelRef('demo:q8_0') })).rejects.toThrow(
      /this cuda engine did not load its GPU backend \(loaded: libggml-cpu-/,
    );
  });

  it('falls back to the source build, and says why, when the package is unavailable', async () => {
    const engineDir = cacheWithSourceOnly();
    const lines: string[] = [];
    const sourceBuilds: { backend: string; fallbackReason: string | null }[] = [];
    const plan: EnginePlan = {
      route: 'prebuilt',
      backend: 'cpu',
      composition: compositionFor('cpu', 'linux', 'x64', null)!,
      cudaRuntime: null,
      reason: 'test',
      warnings: [],
    };
    const outcome = await ensureEngineBuild({
      engineDir,
      plan,
      progress: quietProgress(lines),
      env: offlineNpmEnv(),
      smokeModel: () => resolveModelRef('demo:q8_0'),
      // The source build itself is the nine-minute path every earlier install took; here only the decision to take it is under test.
      buildFromSource: async ({ backend, fallbackReason }) => {
        sourceBuilds.push({ backend, fallbackReason });
        const build: ManagedBuild = {
          commit: 'c'.repeat(40),
          backend,
          binDir: '/nonexistent',
          builtAt: '',
          buildSeconds: 0,
          route: 'source',
          fallbackReason,
        };
        return { ...build, reused: false };
      },
    });
    expect(sourceBuilds).toHaveLength(1);
    expect(sourceBuilds[0]!.backend).toBe('cpu');
    expect(sourceBuilds[0]!.fallbackReason).toMatch(/npm pack failed \(.*@node-llama-cpp\/linux-x64@3\.21\.1/);
    expect(outcome.warnings[0]).toMatch(/^Built from source because the prebuilt cpu engine failed: npm pack failed/);
    expect(lines.join('\n')).toMatch(/falling back to building all of llama\.cpp from source \(cpu\)/);
    // Nothing half-built was left where the cache looks.
    expect(fs.existsSync(path.join(engineDir, 'packages', 'node-llama-cpp-linux-x64-3.21.1', '.complete'))).toBe(false);
  });

  it('falls back to a CPU source build on a GPU plan it cannot build, and says so loudly', async () => {
    const engineDir = cacheWithSourceOnly();
    const plan: EnginePlan = {
      route: 'prebuilt',
      backend: 'vulkan',
      composition: compositionFor('vulkan', 'linux', 'x64', null)!,
      cudaRuntime: null,
      reason: 'test',
      warnings: [],
    };
    let fellBackTo: string | null = null;
    const outcome = await ensureEngineBuild({
      engineDir,
      plan,
      progress: quietProgress([]),
      // No glslc on PATH: Vulkan cannot be built from source here.
      env: { ...offlineNpmEnv(), PATH: path.dirname(process.execPath) + ':/usr/bin:/bin' },
      smokeModel: () => resolveModelRef('demo:q8_0'),
      buildFromSource: async ({ backend, fallbackReason }) => {
        fellBackTo = backend;
        return {
          commit: 'c'.repeat(40),
          backend,
          binDir: '/nonexistent',
          builtAt: '',
          buildSeconds: 0,
          route: 'source',
          fallbackReason,
          reused: false,
        };
      },
    });
    expect(fellBackTo).toBe('cpu');
    expect(outcome.warnings.join('\n')).toMatch(/THE ENGINE WILL RUN ON THE CPU although this machine was planned for vulkan[\s\S]*glslc/);
  });

  it('refuses a package whose bytes differ from the pinned integrity hash', async () => {
    const ref = { ...PREBUILT_PACKAGES['linux-x64'], integrity: `sha512-${Buffer.alloc(64).toString('base64')}` };
    await expect(packPinnedPackage(ref, tempDir())).rejects.toThrow(
      /does not match the pinned integrity hash .* refusing to build from it/,
    );
  });
});
