import path from 'node:path';
import type { EngineBackend, EngineInfo } from '../../shared/contract/engine';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { engineCacheDir } from '../core/paths';
import { ensureEngineBuild, type BuildProgress } from '../engines/llamacpp/engine-build';
import { planEngine, type EnginePlan } from '../engines/llamacpp/engine-plan';
import { buildWithGpuFallback } from '../engines/llamacpp/gpu-build-fallback';
import { probeMachine } from '../engines/llamacpp/machine-probe';
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
  /** What setup decided to build and why; null when a configured or PATH engine was used. */
  plan: { route: EnginePlan['route']; backend: EngineBackend; reason: string } | null;
  /** Said loudly by every face: a GPU machine with a CPU engine, a fallback to the source build. */
  warnings: string[];
}

function describePlan(plan: EnginePlan): string {
  if (plan.route === 'source') return `build all of llama.cpp from source for ${plan.backend}`;
  const extras = plan.composition.extras.map((extra) => ` + ${extra.key}`).join('');
  return `llama.cpp's prebuilt ${plan.backend} libraries (${plan.composition.main}${extras}), the tools built on them`;
}

/**
 * `inferlab setup`: locate or build the engine, then make sure the demo models exist and
 * are intact. Safe to run any number of times; cached work is never redone.
 */
export async function runSetup(options: SetupOptions): Promise<SetupResult> {
  const started = performance.now();
  const explicit = options.force || options.backend || options.fromSource;
  const existing = explicit ? null : (await locateEngine(process.env)).engine;
  const vocabFile = async () => path.join((await ensurePinnedSource(engineCacheDir(), options.log)).sourceDir, DEMO_VOCAB);
  let engine: EngineInfo | null = null;
  let engineReused: boolean | null = null;
  let plan: SetupResult['plan'] = null;
  const warnings: string[] = [];
  if (existing && existing.origin !== 'managed') {
    options.log(`using ${existing.origin} llama-server at ${existing.serverPath}`);
    engine = existing;
  } else {
    ({ engine, engineReused, plan } = await buildEngine(options, vocabFile, warnings));
  }
  if (!engine) throw new AppError(ErrorCode.EngineMissing, 'llama-server could not be located after setup');
  for (const warning of warnings) options.log(`WARNING: ${warning}`);
  const engineSeconds = (performance.now() - started) / 1000;

  const quantize = toolPath(engine, 'llama-quantize');
  if (!quantize)
    throw new AppError(
      ErrorCode.EngineMissing,
      `llama-quantize was not found beside ${engine.serverPath} or on PATH; it is needed to make the demo quantizations`,
    );
  const demoModels = await ensureDemoModels({
    vocabFile: await vocabFile(),
    quantizeBinary: quantize,
    force: options.force,
    log: options.log,
  });
  return { engine, engineReused, engineSeconds, demoModels, plan, warnings };
}

type SetupOptions = {
  backend?: EngineBackend;
  /** Skip the prebuilt libraries and build all of llama.cpp. */
  fromSource?: boolean;
  force?: boolean;
  progress: BuildProgress;
  log: (line: string) => void;
  signal?: AbortSignal;
};

/** Plans the engine for this machine and builds it (or finds it cached), falling back to the CPU when a GPU build fails. */
async function buildEngine(
  options: SetupOptions,
  vocabFile: () => Promise<string>,
  warnings: string[],
): Promise<{ engine: EngineInfo | null; engineReused: boolean; plan: SetupResult['plan'] }> {
  const facts = probeMachine();
  const chosen = planEngine(facts, { backend: options.backend, fromSource: options.fromSource });
  let plan: SetupResult['plan'] = { route: chosen.route, backend: chosen.backend, reason: chosen.reason };
  options.log(`engine plan: ${describePlan(chosen)} (${chosen.reason})`);
  const build = await buildWithGpuFallback({
    engineDir: engineCacheDir(),
    plan: chosen,
    cpuPlan: () => planEngine(facts, { backend: 'cpu', fromSource: options.fromSource }),
    nvcc: facts.nvcc,
    explicit: Boolean(options.backend),
    retry: Boolean(options.force),
    log: options.log,
    signal: options.signal,
    build: (each) =>
      ensureEngineBuild({
        engineDir: engineCacheDir(),
        plan: each,
        force: options.force,
        progress: options.progress,
        signal: options.signal,
        smokeModel: async (quantizeBinary) => {
          const states = await ensureDemoModels({ vocabFile: await vocabFile(), quantizeBinary, log: options.log });
          const model = states.find((state) => state.ref === 'demo:q8_0') ?? states[0];
          if (!model) throw new AppError(ErrorCode.EngineMissing, 'no demo model to smoke-test the engine with');
          return model.path;
        },
      }),
  });
  if (build.backend !== chosen.backend)
    plan = { route: build.route ?? 'source', backend: build.backend, reason: `fell back from ${chosen.backend}: ${chosen.reason}` };
  warnings.push(...build.warnings);
  const how =
    build.route === 'prebuilt'
      ? `on prebuilt libraries (${(build.packages ?? []).map((item) => `${item.name}@${item.version}`).join(', ')})`
      : 'from source';
  options.log(
    build.reused
      ? `reusing cached llama.cpp ${build.commit.slice(0, 7)} (${build.backend}, built ${how}) from ${build.binDir}`
      : `built llama.cpp ${build.commit.slice(0, 7)} (${build.backend}) ${how} in ${build.buildSeconds} s`,
  );
  const engine = (await locateEngine({ ...process.env, INFERLAB_LLAMA_SERVER: path.join(build.binDir, 'llama-server') })).engine;
  return { engine: engine && { ...engine, origin: 'managed', backend: build.backend }, engineReused: build.reused, plan };
}
