import os from 'node:os';
import path from 'node:path';
import type { EngineInfo } from '../../shared/contract/engine';
import type { ServerProfile, ServerPurpose, ServerSnapshot } from '../../shared/contract/server';
import { loraAdapterEntries } from '../../shared/lora-adapter-entry';
import type { LoadedLoraAdapter } from '../engines/llamacpp/launch-args';
import { ErrorCode } from '../../shared/errors';
import type { Disposable } from '../core/disposable';
import { Emitter } from '../core/emitter';
import { AppError } from '../core/errors';
import { llamaCppAdapter } from '../engines/adapters/llamacpp-adapter';
import { servingPurpose } from '../engines/llamacpp/serving-purpose';
import type { ModelEntry } from '../../shared/contract/models';
import { sglangAdapter, vllmAdapter } from '../engines/adapters/python-servers';
import { readUserConfig } from '../core/config';
import { describeModel } from '../models/model-library';
import { resolveModelRef } from '../models/demo-models';
import { assertImageProjector } from '../models/image-projector';
import { assertLoraAdapterFits } from '../models/lora-adapter';
import { findFreePort } from '../core/ports';
import { DEFAULT_TIMEOUTS, ManagedServer, readGpuUsedAhead, type ServerOptions } from './managed-server';
import { findLlamaServers } from '../telemetry/proc-stat';
import { oversubscription } from './oversubscription';
import { assertValidProfile } from '../engines/llamacpp/profile-rules';
import { needsGpuIdentities, withInheritedGpuChoice } from '../engines/gpu-selection';
import { probeGpuIdentities, type GpuIdentities } from '../engines/gpu-identity';
import type { ServerSessionStore } from '../store/server-sessions';

export interface StartServerRequest {
  modelRef: string;
  profile: ServerProfile;
  /** llama.cpp unless given; vLLM and SGLang need their command in config.json. */
  engine?: 'llama.cpp' | 'vllm' | 'sglang';
  coldStartProbe?: boolean;
  /** Start even when its threads and another llama-server's exceed the cores (see oversubscription.ts). */
  force?: boolean;
  /** What the server is for: tool calls, embeddings or reranking start llama-server for it (see serving-purpose.ts). */
  serves?: ServerPurpose;
}

/** The draft model's file, checked with the same bounded reader as the served model before anything is launched. */
async function resolveDraftModel(ref: string): Promise<string> {
  const draftPath = await resolveModelRef(ref);
  const draft = await describeModel(draftPath);
  if (!draft.valid) throw new AppError(ErrorCode.InvalidInput, `draftModel ${draftPath}: ${draft.invalidReason}`, { model: draft });
  return draftPath;
}

/** The projector's file, checked to be one before anything is launched. */
async function resolveImageProjector(ref: string): Promise<string> {
  const projectorPath = await resolveModelRef(ref);
  await assertImageProjector(projectorPath);
  return projectorPath;
}

/**
 * The adapters' files in the profile's order, each checked against the served model before anything
 * is launched (llama-server's own refusal names neither), each at its own scale or the profile's.
 */
async function resolveLoraAdapters(profile: ServerProfile, modelPath: string): Promise<LoadedLoraAdapter[]> {
  const loaded: LoadedLoraAdapter[] = [];
  for (const entry of loraAdapterEntries(profile.loraAdapter ?? '')) {
    const path = await resolveModelRef(entry.file);
    await assertLoraAdapterFits(path, modelPath);
    loaded.push({ path, scale: entry.scale ?? profile.loraScale ?? 1 });
  }
  return loaded;
}

/**
 * Owns every server this process started. Starting validates the model (with the app's own
 * bounded reader, before anything is launched) and the profile; disposing stops them all.
 */
export class ServerManager implements Disposable {
  readonly changes = new Emitter<ServerSnapshot>();
  /** Every managed server's log lines, as they come. */
  readonly logLines = new Emitter<{ serverId: string; line: string }>();
  private readonly servers = new Map<string, ManagedServer>();

  constructor(
    private readonly engine: () => Promise<EngineInfo>,
    private readonly sessions: ServerSessionStore,
    private readonly logDir: string,
    private readonly options: ServerOptions = { timeouts: DEFAULT_TIMEOUTS, choosePort: () => findFreePort() },
  ) {}

  /** Checks the request and creates the server without starting it, so callers can subscribe first. */
  async prepare(request: StartServerRequest): Promise<ManagedServer> {
    const engineId = request.engine ?? 'llama.cpp';
    let modelPath = request.modelRef;
    let draftPath: string | null = null;
    let loraAdapters: LoadedLoraAdapter[] = [];
    let projectorPath: string | null = null;
    let model: ModelEntry | null = null;
    if (engineId === 'llama.cpp') {
      modelPath = await resolveModelRef(request.modelRef);
      model = await describeModel(modelPath);
      if (!model.valid) throw new AppError(ErrorCode.InvalidInput, `${modelPath}: ${model.invalidReason}`, { model });
      assertValidProfile(request.profile, { trainedContext: model.contextLength });
      draftPath = request.profile.draftModel === null ? null : await resolveDraftModel(request.profile.draftModel);
      loraAdapters = request.profile.loraAdapter ? await resolveLoraAdapters(request.profile, modelPath) : [];
      projectorPath = request.profile.projector ? await resolveImageProjector(request.profile.projector) : null;
      if (!forced(request)) this.assertCoresFree(request.profile.threads);
    } else {
      assertValidProfile(request.profile, undefined, engineId);
    }
    // Begun once the request is known good (a refused one spawns no GPU tool): it answers while the engine is found.
    const gpuReadingAhead = readGpuUsedAhead(this.options);
    const engine = engineId === 'llama.cpp' ? await this.engine() : null;
    const backend = engine?.backend ?? null;
    const environment = this.options.environment ?? process.env;
    const identities = needsGpuIdentities(request.profile, backend, environment)
      ? await (this.options.readGpuIdentities ?? probeGpuIdentities)(backend === 'vulkan', environment, backend === null)
      : null;
    const engineAdapter = engineId === 'llama.cpp' ? llamaCppAdapter(engine!, identities) : pythonServerAdapter(engineId, identities);
    const adapter =
      model && request.serves && request.serves !== 'generation' ? servingPurpose(engineAdapter, request.serves, model) : engineAdapter;
    const profile = withInheritedGpuChoice(request.profile, backend, environment, identities?.nvidia ?? null, identities?.amd ?? null);
    const server = new ManagedServer(
      adapter,
      { ref: request.modelRef, path: modelPath, draftPath, loraAdapters, projectorPath },
      profile,
      this.sessions,
      this.logDir,
      {
        ...this.options,
        coldStartProbe: request.coldStartProbe ?? this.options.coldStartProbe,
        force: forced(request) || this.options.force,
        siblingPids: () => this.ownPids(),
        gpuReadingAhead,
      },
    );
    this.servers.set(server.id, server);
    server.changes.on((snapshot) => this.changes.emit(snapshot));
    server.logLines.on((line) => this.logLines.emit({ serverId: server.id, line }));
    return server;
  }

  /** Refuses, before anything is launched, a server whose threads would oversubscribe the cores. */
  private assertCoresFree(threads: number): void {
    const cores = os.availableParallelism();
    const others = findLlamaServers({ cores, exclude: this.ownPids() });
    const problem = oversubscription({ threads, cores, others });
    if (problem)
      throw new AppError(ErrorCode.InvalidInput, problem, {
        cores,
        threads,
        others: others.map((other) => ({ pid: other.pid, threads: other.threads, command: other.command })),
      });
  }

  /** The processes of this manager's servers: scheduled by the app itself, not competition. */
  private ownPids(): Set<number> {
    return new Set(
      this.list()
        .map((snapshot) => snapshot.pid)
        .filter((pid): pid is number => pid !== null),
    );
  }

  async start(request: StartServerRequest): Promise<ServerSnapshot> {
    const server = await this.prepare(request);
    return server.start();
  }

  get(id: string): ManagedServer {
    const server = this.servers.get(id);
    if (!server) throw new AppError(ErrorCode.NotFound, `No server with id ${id}`);
    return server;
  }

  list(): ServerSnapshot[] {
    return [...this.servers.values()].map((server) => server.snapshot);
  }

  async stop(id: string): Promise<ServerSnapshot> {
    return this.get(id).stop();
  }

  async dispose(): Promise<void> {
    await Promise.allSettled([...this.servers.values()].map((server) => server.stop()));
    this.changes.clear();
  }
}

/**
 * `force` on the request, or INFERLAB_FORCE_SERVER_START=1 for a machine whose servers are
 * coordinated from outside (a shared test box): every start then skips the cores check.
 */
function forced(request: StartServerRequest): boolean {
  return request.force === true || process.env.INFERLAB_FORCE_SERVER_START === '1';
}

export function serverLogDir(dataDir: string): string {
  return path.join(dataDir, 'logs', 'servers');
}

/** vLLM / SGLang from the command the user saved in config.json (engine.vllmCommand, engine.sglangCommand). */
function pythonServerAdapter(engine: 'vllm' | 'sglang', identities: GpuIdentities | null) {
  const config = readUserConfig().engine ?? {};
  const command = engine === 'vllm' ? config.vllmCommand : config.sglangCommand;
  if (!command) {
    const key = engine === 'vllm' ? 'vllmCommand' : 'sglangCommand';
    throw new AppError(
      ErrorCode.InvalidInput,
      `No ${engine} command configured: set engine.${key} in config.json (for example "${engine === 'vllm' ? 'vllm' : 'python -m sglang.launch_server'}")`,
    );
  }
  return engine === 'vllm' ? vllmAdapter(command, identities) : sglangAdapter(command, identities);
}
