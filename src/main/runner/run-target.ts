import type { WorkloadServes } from '../workload/workload-serves';
import fs from 'node:fs';
import type { EngineInfo } from '../../shared/contract/engine';
import type { ServerProfile, ServerSnapshot } from '../../shared/contract/server';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { parseOpenAiModels } from '../engines/adapters/endpoints';
import type { ManagedServer } from '../server/managed-server';
import type { ServerManager } from '../server/server-manager';
import type { RunStore } from '../store/run-store';
import type { ModelHashCache } from '../store/model-hashes';
import { memorySize } from '../../shared/memory-size';

export type RunTargetSpec =
  | {
      kind: 'model';
      modelRef: string;
      modelPath: string;
      profile: ServerProfile;
      coldStartProbe?: boolean;
      /** Start even beside another llama-server that claims the cores. */ force?: boolean;
      /** An embeddings or reranking workload's server is started for it. */
      serves?: WorkloadServes;
    }
  | { kind: 'endpoint'; url: string; headers: Record<string, string> }
  /** A server this process already manages (experiments reuse one across windows). */
  | { kind: 'server'; server: ManagedServer; modelRef: string; modelPath: string };

/** What the run records of the model it served: its reference, file, size and hash. */
export interface ServedModel {
  ref: string | null;
  path: string | null;
  size: number | null;
  sha256: string | null;
}

/** A target ready for requests: where to send them, what serves them, and how to let it go. */
export interface ConnectedTarget {
  baseUrl: string;
  headers: Record<string, string>;
  /** The server's snapshot when Infer Lab manages it; null for an endpoint. */
  server: ServerSnapshot | null;
  /** The server this run's requests go to, when Infer Lab started it (or already managed it). */
  managed: ManagedServer | null;
  /** Settles with a reason when the managed server crashes mid-run. */
  serverLost: Promise<string> | undefined;
  engineInfo: unknown;
  model: ServedModel;
  /** An endpoint's slot count when it is a llama-server; null otherwise (a managed server's is in its config). */
  endpointSlots: number | null;
  /** The profile as launched; null for an endpoint. */
  profile: ServerProfile | null;
  /** Stops the server this run started; nothing for one it borrowed or an endpoint. */
  release(): Promise<void>;
}

async function endpointModel(url: string, headers: Record<string, string>): Promise<string | null> {
  try {
    const response = await fetch(`${url}/v1/models`, { headers, signal: AbortSignal.timeout(10_000) });
    if (!response.ok) throw new AppError(ErrorCode.RequestFailed, `${url}/v1/models answered HTTP ${response.status}`);
    return parseOpenAiModels(await response.json())[0] ?? null;
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw new AppError(ErrorCode.RequestFailed, `Cannot reach the endpoint ${url}: ${(error as Error).message}`);
  }
}

/** An endpoint's slot count when it is a llama-server (/props total_slots); null otherwise. */
async function endpointSlots(url: string, headers: Record<string, string>): Promise<number | null> {
  try {
    const response = await fetch(`${url}/props`, { headers, signal: AbortSignal.timeout(3_000) });
    const props = response.ok ? ((await response.json()) as { total_slots?: unknown }) : null;
    return typeof props?.total_slots === 'number' ? props.total_slots : null;
  } catch {
    return null;
  }
}

function crashReason(server: ManagedServer): Promise<string> {
  return new Promise((resolve) =>
    server.changes.on((snapshot) => {
      if (snapshot.state === 'crashed') resolve(`the server crashed: ${snapshot.fault?.message ?? 'exited'}`);
    }),
  );
}

/**
 * The model as a run records it, identified by its sha256. A file not hashed before is read whole
 * (after the server is ready, so its load time is measured on a quiet disk): a minute for 100 GB,
 * which is said before the wait begins and which `signal` stops.
 */
export async function identifiedModel(
  ref: string,
  path: string,
  options: { hashes: ModelHashCache; onStatus?: (line: string) => void; signal?: AbortSignal },
): Promise<ServedModel> {
  const size = (await fs.promises.stat(path)).size;
  let announced = false;
  const announce = () => {
    if (announced) return;
    announced = true;
    options.onStatus?.(`identifying ${ref} by its SHA-256 (${memorySize(size)}, read once; remembered after)`);
  };
  return { ref, path, size, sha256: await options.hashes.hash(path, announce, options.signal) };
}

/** What starting a run's target needs: the store (model hashes), the servers, the engine, where to say what it does, and its cancel. */
interface TargetDeps {
  store: RunStore;
  servers: ServerManager;
  engine: () => Promise<EngineInfo>;
  onStatus?: (line: string) => void;
  signal?: AbortSignal;
}

/** The target's model identified, the run's status lines and cancel reaching the read. */
const identifiedTarget = (target: { modelRef: string; modelPath: string }, deps: TargetDeps) =>
  identifiedModel(target.modelRef, target.modelPath, { hashes: deps.store.hashes, onStatus: deps.onStatus, signal: deps.signal });

/** Starts the run's llama-server and waits until it is ready; a server that fails to start is stopped and its fault thrown. */
async function startModel(target: Extract<RunTargetSpec, { kind: 'model' }>, deps: TargetDeps): Promise<ConnectedTarget> {
  const prepared = await deps.servers.prepare({
    modelRef: target.modelRef,
    profile: target.profile,
    coldStartProbe: target.coldStartProbe,
    force: target.force,
    serves: target.serves,
  });
  const release = async () => void (await prepared.stop());
  const serverLost = crashReason(prepared);
  deps.onStatus?.(`starting llama-server on ${target.modelRef}`);
  const server = await prepared.start();
  if (server.state !== 'ready' || !server.baseUrl) {
    await release();
    throw new AppError(
      ErrorCode.ServerStartFailed,
      `${server.fault?.message ?? 'the server did not start'}\n  hint: ${server.fault?.hint ?? ''}\n${(server.fault?.logTail ?? []).slice(-12).join('\n')}`,
      { fault: server.fault },
    );
  }
  let engineInfo: EngineInfo;
  let model: ServedModel;
  try {
    engineInfo = await deps.engine();
    model = await identifiedTarget(target, deps);
  } catch (error) {
    // The run never starts: the server it started must not outlive it.
    await release().catch(() => {});
    throw error;
  }
  return {
    baseUrl: server.baseUrl,
    headers: { ...prepared.authHeaders },
    server,
    managed: prepared,
    serverLost,
    engineInfo,
    model,
    endpointSlots: null,
    // As launched: GPUs inherited from the environment are the ones telemetry counts.
    profile: prepared.profile,
    release,
  };
}

/**
 * The run's target made ready: a model's server started, a managed server checked, or an
 * endpoint asked for its model and slots.
 */
export async function connectTarget(target: RunTargetSpec, deps: TargetDeps): Promise<ConnectedTarget> {
  if (target.kind === 'model') return startModel(target, deps);
  if (target.kind === 'server') {
    const server = target.server.snapshot;
    if (server.state !== 'ready' || !server.baseUrl)
      throw new AppError(ErrorCode.ServerStartFailed, `the server ${server.id} is ${server.state}, not ready`);
    return {
      baseUrl: server.baseUrl,
      headers: { ...target.server.authHeaders },
      server,
      managed: target.server,
      serverLost: crashReason(target.server),
      engineInfo: await deps.engine(),
      model: await identifiedTarget(target, deps),
      endpointSlots: null,
      profile: target.server.profile,
      release: async () => {},
    };
  }
  const model = await endpointModel(target.url, target.headers);
  return {
    baseUrl: target.url,
    headers: target.headers,
    server: null,
    managed: null,
    serverLost: undefined,
    engineInfo: { origin: 'endpoint', url: target.url, model },
    model: { ref: model, path: null, size: null, sha256: null },
    endpointSlots: await endpointSlots(target.url, target.headers),
    profile: null,
    release: async () => {},
  };
}
