import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { EngineBackend } from '../../../shared/contract/engine';
import { ErrorCode } from '../../../shared/errors';
import { AppError } from '../../core/errors';
import { findFreePort } from '../../core/ports';
import { ManagedProcess, runToCompletion } from '../../core/process';
import { parseLogFacts } from './log-facts';

/** What a smoke test proved about an engine; recorded with the build. */
export interface SmokeResult {
  /** The ggml CPU backend variant the server loaded, e.g. "zen4" (libggml-cpu-zen4.so); null when built in. */
  cpuVariant: string | null;
  /** The GPU backend library the server loaded, e.g. "libggml-cuda.so"; null on CPU. */
  gpuLibrary: string | null;
  layersOffloaded: { offloaded: number; total: number } | null;
  tokensGenerated: number;
  seconds: number;
}

// Linux's loader, then macOS's dyld ("dyld[123]: Library not loaded: @rpath/…", "Symbol not found").
const LOADER_FAILURE =
  /error while loading shared libraries|symbol lookup error|undefined symbol|cannot open shared object|Library not loaded|Symbol not found/;
const GPU_LIBRARY: Record<EngineBackend, RegExp | null> = {
  cpu: null,
  cuda: /libggml-cuda\.so/,
  vulkan: /libggml-vulkan\.so/,
  metal: null,
};

/** The ggml backend libraries a running process has mapped (Linux); [] where /proc is not readable. */
export function loadedBackendLibraries(pid: number): string[] {
  try {
    const maps = fs.readFileSync(`/proc/${pid}/maps`, 'utf8');
    return [...new Set([...maps.matchAll(/\/(libggml-[\w-]+\.so)\b/g)].map((match) => match[1]!))].filter(
      (name) => name !== 'libggml-base.so',
    );
  } catch {
    return [];
  }
}

export function cpuVariantOf(libraries: readonly string[]): string | null {
  for (const name of libraries) {
    const variant = /^libggml-cpu-([\w-]+)\.so$/.exec(name)?.[1];
    if (variant) return variant;
  }
  return null;
}

function fail(what: string, detail: string): never {
  throw new AppError(ErrorCode.EngineBuildFailed, `The engine's smoke test failed: ${what}\n${detail}`);
}

async function checkToolLoads(binDir: string, tool: string): Promise<void> {
  const result = await runToCompletion(path.join(binDir, tool), ['--help'], { timeoutMs: 20_000 });
  if (result.code === 127 || result.signal || LOADER_FAILURE.test(result.output))
    fail(`${tool} does not start`, result.output.split('\n').slice(-6).join('\n'));
}

async function waitForHealth(baseUrl: string, server: ManagedProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (server.hasExited) fail('llama-server exited while loading the model', server.logs.last(15).join('\n'));
    const status = await fetch(`${baseUrl}/health`, { signal: AbortSignal.timeout(2000) }).then(
      (response) => response.status,
      () => 0,
    );
    if (status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  fail(`llama-server was not ready after ${timeoutMs / 1000} s`, server.logs.last(15).join('\n'));
}

/**
 * Proves a freshly built engine: every tool starts (its libraries resolve), llama-server
 * loads `model`, answers /props and generates tokens, and on a GPU backend it loaded the
 * GPU library and offloaded every layer. A "CUDA engine" that offloads nothing fails here.
 */
export async function smokeTestEngine(options: {
  binDir: string;
  backend: EngineBackend;
  model: string;
  log?: (line: string) => void;
}): Promise<SmokeResult> {
  const started = performance.now();
  const { binDir, backend, model } = options;
  for (const tool of ['llama-quantize', 'llama-bench', 'llama-perplexity']) await checkToolLoads(binDir, tool);
  const version = await runToCompletion(path.join(binDir, 'llama-server'), ['--version'], { timeoutMs: 20_000 });
  if (version.code !== 0 || LOADER_FAILURE.test(version.output)) fail('llama-server --version', version.output);

  const port = await findFreePort();
  const gpu = backend === 'cuda' || backend === 'vulkan' || backend === 'metal';
  const args = ['-m', model, '--host', '127.0.0.1', '--port', String(port), '-c', '512', '-np', '1', '--no-webui', '-lv', '4'];
  args.push('-t', String(Math.max(1, Math.min(4, os.availableParallelism()))), '-ngl', gpu ? '999' : '0');
  const server = new ManagedProcess(path.join(binDir, 'llama-server'), args, { logCapacity: 2000 });
  try {
    const baseUrl = `http://127.0.0.1:${port}`;
    await waitForHealth(baseUrl, server, 120_000);
    const props = (await fetch(`${baseUrl}/props`).then((response) => (response.ok ? response.json() : null))) as Record<
      string,
      unknown
    > | null;
    if (!props || typeof props.model_path !== 'string') fail('/props did not describe the loaded model', JSON.stringify(props));
    const completion = (await fetch(`${baseUrl}/completion`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'The engine works', n_predict: 8, temperature: 0, cache_prompt: false }),
      signal: AbortSignal.timeout(120_000),
    }).then((response) => (response.ok ? response.json() : null))) as { timings?: { predicted_n?: number } } | null;
    const tokensGenerated = completion?.timings?.predicted_n ?? 0;
    if (tokensGenerated < 1) fail('llama-server generated no tokens', JSON.stringify(completion));

    const libraries = server.pid === undefined ? [] : loadedBackendLibraries(server.pid);
    const facts = parseLogFacts(server.logs.last());
    const gpuLibrary = libraries.find((name) => GPU_LIBRARY[backend]?.test(name)) ?? null;
    if (gpu && backend !== 'metal') {
      if (!gpuLibrary)
        fail(
          `this ${backend} engine did not load its GPU backend (loaded: ${libraries.join(', ') || 'none'})`,
          server.logs
            .last()
            .filter((line) => /ggml|backend|cuda|vulkan|device/i.test(line))
            .slice(-12)
            .join('\n'),
        );
    }
    if (
      gpu &&
      !(facts.layersOffloaded && facts.layersOffloaded.total > 0 && facts.layersOffloaded.offloaded === facts.layersOffloaded.total)
    )
      fail(
        `this ${backend} engine offloaded ${facts.layersOffloaded ? `${facts.layersOffloaded.offloaded}/${facts.layersOffloaded.total}` : 'no'} layers to the GPU`,
        server.logs
          .last()
          .filter((line) => /offload|CUDA|Vulkan|device/i.test(line))
          .slice(-12)
          .join('\n'),
      );
    const result: SmokeResult = {
      cpuVariant: cpuVariantOf(libraries),
      gpuLibrary,
      layersOffloaded: facts.layersOffloaded,
      tokensGenerated,
      seconds: Math.round((performance.now() - started) / 100) / 10,
    };
    options.log?.(
      `smoke test passed: ${tokensGenerated} tokens generated` +
        (result.cpuVariant ? `, CPU variant ${result.cpuVariant}` : '') +
        (gpuLibrary ? `, ${gpuLibrary} with ${facts.layersOffloaded?.offloaded}/${facts.layersOffloaded?.total} layers offloaded` : ''),
    );
    return result;
  } finally {
    await server.stop(5000);
  }
}
