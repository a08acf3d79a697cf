import path from 'node:path';
import type { EngineBackend, EngineInfo } from '../../shared/contract/engine';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { engineCacheDir } from '../core/paths';
import { chooseBackend } from '../engines/llamacpp/backend';
import { ensureManagedBuild, type BuildProgress } from '../engines/llamacpp/engine-build';
import { ensurePinnedSource } from '../engines/llamacpp/engine-source';
import { locateEngine, toolPath } from '../engines/llamacpp/locate-engine';
import { ensureDemoModels, type DemoFileState } from '../models/demo-models';

/** The vocabulary the demo models borrow: llama's SentencePiece tokenizer (32,000 tokens). */
const DEMO_VOCAB = path.join('models', 'ggml-vocab-llama-spm.gguf');

export interface SetupResult {
  engine: EngineInfo;
  engineReused: boolean | null;
  engineSeconds: number;
  demoModels: DemoFileState[];
}

/**
 * `inferlab setup`: locate or build the engine, then make sure the demo models exist and
 * are intact. Safe to run any number of times; cached work is never redone.
 */
export async function runSetup(options: {
  backend?: EngineBackend;
  force?: boolean;
  progress: BuildProgress;
  log: (line: string) => void;
  signal?: AbortSignal;
}): Promise<SetupResult> {
  const started = performance.now();
  const choice = chooseBackend(options.backend);
  let engine: EngineInfo | null = null;
  let engineReused: boolean | null = null;
  const existing = options.force || options.backend ? null : (await locateEngine(process.env, choice.backend)).engine;
  if (existing && existing.origin !== 'managed') {
    options.log(`using ${existing.origin} llama-server at ${existing.serverPath}`);
    engine = existing;
  } else {
    options.log(`engine backend: ${choice.backend} (${choice.reason})`);
    const build = await ensureManagedBuild({
      engineDir: engineCacheDir(),
      backend: choice.backend,
      force: options.force,
      progress: options.progress,
      signal: options.signal,
    });
    engineReused = build.reused;
    options.log(
      build.reused
        ? `reusing cached llama.cpp ${build.commit.slice(0, 7)} (${build.backend}) from ${build.binDir}`
        : `built llama.cpp ${build.commit.slice(0, 7)} (${build.backend}) in ${build.buildSeconds} s`,
    );
    engine = (await locateEngine({ ...process.env, INFERLAB_LLAMA_SERVER: path.join(build.binDir, 'llama-server') })).engine;
    if (engine) engine = { ...engine, origin: 'managed', backend: build.backend };
  }
  if (!engine) throw new AppError(ErrorCode.EngineMissing, 'llama-server could not be located after setup');
  const engineSeconds = (performance.now() - started) / 1000;

  const quantize = toolPath(engine, 'llama-quantize');
  if (!quantize)
    throw new AppError(
      ErrorCode.EngineMissing,
      `llama-quantize was not found beside ${engine.serverPath} or on PATH; it is needed to make the demo quantizations`,
    );
  const { sourceDir } = await ensurePinnedSource(engineCacheDir(), options.log);
  const demoModels = await ensureDemoModels({
    vocabFile: path.join(sourceDir, DEMO_VOCAB),
    quantizeBinary: quantize,
    force: options.force,
    log: options.log,
  });
  return { engine, engineReused, engineSeconds, demoModels };
}
