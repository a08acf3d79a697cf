import path from 'node:path';
import type { ModelsService } from '../../shared/contract';
import type { ModelEntry, ModelScan, QuantTypeInfo } from '../../shared/contract/models';
import { runToCompletion } from '../core/process';
import { parseQuantTypes } from '../models/quantize-help';
import type { ModelHashCache } from '../store/model-hashes';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import type { EngineInfo } from '../../shared/contract/engine';
import { toolPath } from '../engines/llamacpp/locate-engine';
import { defaultModelFolders, describeModel, scanModels } from '../models/model-library';
import { planQuantization, quantizeModel } from '../models/quantize';
import { resolveModelWithin, type ServiceAccess } from './access';
import { userCacheDir } from '../core/paths';
import { isHubRef } from '../models/hub/hub-access';
import { planModels, type LatestDecode, type PlanBase } from '../models/plan/plan-models';
import { readGgufHeaderAsync } from '../models/gguf-reader';
import { readPlanMachine } from './plan-machine';
import { awaitTask, launchToolTask, startedTask, type LaunchedTask, type TaskRunner } from './tasks';
import { cachedModels, executePull, preparePull } from '../models/hub/hub-pull';
import { searchHubModels } from '../models/hub/hub-search';
import type { ModelPull, ModelPullRequest, PullProgress } from '../../shared/contract/models';

/** The base model a plan checks adapters against: held to the face's roots, its header read. */
async function planBase(access: ServiceAccess, model: string): Promise<PlanBase> {
  const file = await resolveModelWithin(access, model);
  const header = await readGgufHeaderAsync(file).catch((error: Error) => {
    throw new AppError(ErrorCode.InvalidInput, `adapterFor ${model}: not a readable GGUF file: ${error.message}`);
  });
  return { model, header };
}

/** What a caller awaiting a quantization (the CLI) hears while it goes. */
export interface QuantizeHooks {
  onProgress?: (type: string, tensorsDone: number, tensorsTotal: number | null) => void;
  signal?: AbortSignal;
}

/** The models service plus the awaitable quantization in-process callers get. */
export interface LocalModelsService extends ModelsService {
  /** Quantizes like `quantize` and resolves with the new files; aborting `signal` cancels it. */
  quantizeAndWait(source: string, types: string[], outDir: string | null, hooks?: QuantizeHooks): Promise<ModelEntry[]>;
  /** Scans like `scan`, reporting the progress of each file it hashes. */
  scanWithProgress(
    folders: string[] | null,
    options: { hash?: boolean; onHashProgress?: (file: string, bytesDone: number, bytesTotal: number) => void },
  ): Promise<ModelScan>;
  /** Pulls like `pull` and resolves with the pulled models; aborting `signal` stops it and keeps the file in progress, to resume. */
  pullAndWait(request: ModelPullRequest, hooks?: PullHooks): Promise<ModelPull>;
}

/** What a caller awaiting a pull (the CLI) hears while it goes. */
export interface PullHooks {
  onProgress?: (progress: PullProgress) => void;
  signal?: AbortSignal;
}

/** ['all'] asks for every quantization. */
function pullQuants(quants: readonly string[]): string[] | 'all' {
  return quants.some((quant) => quant.toLowerCase() === 'all') ? 'all' : [...quants];
}

/** What the models service's operations share: the engine, the face's rights, the hash cache and the one task runner. */
interface ModelsContext {
  engine: () => Promise<EngineInfo>;
  access: ServiceAccess;
  hashes: ModelHashCache;
  tasks: TaskRunner;
}

type ScanOptions = { hash?: boolean; onHashProgress?: (file: string, bytesDone: number, bytesTotal: number) => void };

/** The folders named (each within the face's roots), else the usual model folders; each file hashed when asked. */
async function scanWithProgress(
  context: ModelsContext,
  folders: string[] | null | undefined,
  options: ScanOptions = {},
): Promise<ModelScan> {
  const { access } = context;
  const named = Boolean(folders && folders.length > 0);
  const chosen = named
    ? await Promise.all(folders!.map((folder) => access.paths.check(folder, 'model')))
    : access.paths.unrestricted
      ? defaultModelFolders()
      : access.paths.roots('model');
  const result = await scanModels(chosen, { reportMissing: named });
  if (options.hash) {
    for (const model of result.models.filter((entry) => entry.valid && entry.parts.length === 1)) {
      model.sha256 = await context.hashes.hash(model.path, (done, total) => options.onHashProgress?.(model.path, done, total));
    }
  }
  return result;
}

/** Starts llama-quantize for each type in turn, every target checked against the face's roots first. */
async function launchQuantize(
  context: ModelsContext,
  source: string,
  types: string[],
  outDir: string | null,
  hooks: QuantizeHooks = {},
): Promise<LaunchedTask<ModelEntry[]>> {
  const { access } = context;
  const plan = await planQuantization(
    await resolveModelWithin(access, source),
    types,
    outDir === null ? null : await access.paths.check(outDir, 'model'),
  );
  // Written beside the source by default: a file granted through the dialog opens that file, not its folder.
  for (const { target } of plan.targets) await access.paths.check(target, 'model');
  const binary = toolPath(await context.engine(), 'llama-quantize');
  if (!binary) throw new AppError(ErrorCode.EngineMissing, 'llama-quantize is not available; run inferlab setup');
  return launchToolTask(context.tasks, 'quantize', async (signal, report) => {
    const made: ModelEntry[] = [];
    for (const { type, target } of plan.targets) {
      await quantizeModel({
        quantizeBinary: binary,
        source: plan.source,
        target,
        type,
        signal,
        onProgress: (tensors, total) => {
          hooks.onProgress?.(type, tensors, total);
          report({ message: path.basename(target), done: tensors, total });
        },
      });
      made.push(await describeModel(target));
    }
    return made;
  });
}

async function launchPull(
  context: ModelsContext,
  request: ModelPullRequest,
  hooks: PullHooks,
  discardPartialOnCancel: boolean,
): Promise<LaunchedTask<ModelPull>> {
  // Settled before the job starts: a wrong name, a gated model or a full disk is the call's own error.
  const prepared = await preparePull(request.source, pullQuants(request.quants), { signal: hooks.signal });
  return launchToolTask(context.tasks, 'pull', (signal, report) =>
    executePull(prepared, {
      signal,
      discardPartialOnCancel,
      onProgress: (progress) => {
        hooks.onProgress?.(progress);
        report({ message: progress.file, done: progress.bytesDone, total: progress.bytesTotal });
      },
    }),
  );
}

/** The types this engine's llama-quantize makes, from its own --help. */
async function readQuantTypes(engine: () => Promise<EngineInfo>): Promise<QuantTypeInfo[]> {
  const binary = toolPath(await engine(), 'llama-quantize');
  if (!binary) throw new AppError(ErrorCode.EngineMissing, 'llama-quantize is not available; run inferlab setup');
  // The build prints its types with --help (and exits 1 for it).
  const { output } = await runToCompletion(binary, ['--help'], { timeoutMs: 10_000 });
  const types = parseQuantTypes(output);
  if (types.length === 0) throw new AppError(ErrorCode.Internal, `${binary} --help listed no quantization types`);
  return types;
}

export function createModelsService(
  engine: () => Promise<EngineInfo>,
  tasks: TaskRunner,
  access: ServiceAccess,
  hashes: ModelHashCache,
  latestDecodeOf: LatestDecode,
): LocalModelsService {
  const context: ModelsContext = { engine, access, hashes, tasks };
  let quantTypes: Promise<QuantTypeInfo[]> | null = null;
  return {
    scan: async (folders, options) => scanWithProgress(context, folders, { hash: Boolean(options?.hash) }),
    scanWithProgress: (folders, options) => scanWithProgress(context, folders, options),
    quantize: async (source, types, outDir) => startedTask(await launchQuantize(context, source, types, outDir ?? null)),
    quantizeAndWait: async (source, types, outDir, hooks = {}) =>
      awaitTask(await launchQuantize(context, source, types, outDir, hooks), tasks, hooks.signal),
    plan: async (request) => {
      // A local source is a path the caller must be allowed to read; a hub name reaches only HF_ENDPOINT.
      const source = isHubRef(request.source) ? request.source : await access.paths.check(request.source, 'model');
      const base = request.adapterFor ? await planBase(access, request.adapterFor) : null;
      return planModels({ ...request, source }, await readPlanMachine(userCacheDir()), { latestDecodeOf, base });
    },
    search: async (query) => searchHubModels(query),
    // Cancelled from a face, a pull deletes the file it was downloading; interrupted any other way, the file stays to resume.
    pull: async (request) => startedTask(await launchPull(context, request, {}, true)),
    pullAndWait: async (request, hooks = {}) => awaitTask(await launchPull(context, request, hooks, false), tasks, hooks.signal),
    cached: async (source, quants) => cachedModels(source, pullQuants(quants)),
    quantTypes: () =>
      (quantTypes ??= readQuantTypes(engine)).catch((error: unknown) => {
        quantTypes = null;
        throw error;
      }),
  };
}
