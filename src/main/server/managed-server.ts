import crypto from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import type { ColdStart, ServerFault, ServerFaultCode, ServerProfile, ServerSnapshot, ServerState } from '../../shared/contract/server';
import type { LoadedLoraAdapter } from '../engines/llamacpp/launch-args';
import { ErrorCode } from '../../shared/errors';
import { Emitter } from '../core/emitter';
import { AppError } from '../core/errors';
import { findFreePort, isPortInUse, PORT_TAKEN_HINT } from '../core/ports';
import { ManagedProcess, type ProcessExit } from '../core/process';
import { redactArgv } from '../core/redact';
import type { ServerAddress } from '../core/server-address';
import type { ManagedEngineAdapter } from '../engines/engine-adapter';
import { streamOnce } from '../client/stream-client';
import { usedMibOf } from '../telemetry/gpu-sampler';
import { readGpuUsedOnce } from '../telemetry/gpu-memory-snapshot';
import { assertGpusPresent } from '../engines/gpu-selection';
import type { GpuIdentities } from '../engines/gpu-identity';
import { selectedGpuIndexes } from '../../shared/gpu-devices';
import { findLlamaServers, readProcStat } from '../telemetry/proc-stat';
import { olderThan, oversubscription } from './oversubscription';
import { logPrivacyRefusal, probeLogPrivacy } from './log-privacy';
import { RotatingLogFile } from './server-log-file';
import type { ServerSessionStore } from '../store/server-sessions';

export interface ServerTimeouts {
  /** Give up when the log shows no loading progress for this long. */
  stallMs: number;
  /** Give up regardless after this long. */
  hardMs: number;
  /** SIGTERM → SIGKILL grace when stopping. */
  stopGraceMs: number;
}

export interface ServerOptions {
  timeouts: ServerTimeouts;
  /** Where ports come from; a port taken between the probe and the bind is retried with a new one. */
  choosePort: () => Promise<number>;
  /**
   * Send the fixed probe request that ends the cold-start measurement. Off for a
   * cold-process condition, whose first real request must find the server untouched.
   */
  coldStartProbe?: boolean;
  /** Keep running even when an older llama-server's threads and this one's exceed the cores. */
  force?: boolean;
  /** Servers of the same manager: the app schedules them itself, so they never crowd this one out. */
  siblingPids?: () => ReadonlySet<number>;
  /** Reads each GPU's used memory once, just before the spawn, by nvidia-smi's indexes (a stand-in in tests). */
  readGpuUsed?: () => Promise<ReadonlyMap<number, number | null> | null>;
  /**
   * That reading, begun while the server was being prepared (its model described, the engine found), for its first start:
   * a GPU tool can take a second to answer, and the spawn would wait on it.
   */
  gpuReadingAhead?: GpuReadingAhead;
  /** The environment servers inherit GPU choices from (CUDA_VISIBLE_DEVICES); this process's own unless given. */
  environment?: NodeJS.ProcessEnv;
  /** Reads nvidia-smi -L and (when asked) vulkaninfo and amd-smi's list, to match a GPU choice to devices (a stand-in in tests). */
  readGpuIdentities?: (withVulkan: boolean, environment: NodeJS.ProcessEnv, withAmd: boolean) => Promise<GpuIdentities>;
}

/** Each GPU's used memory by index, and the tool that read it; null where no GPU tool answered. */
export type GpuUsedReading = { used: ReadonlyMap<number, number | null>; tool: 'nvidia-smi' | 'amd-smi' } | null;

export interface GpuReadingAhead {
  reading: Promise<GpuUsedReading>;
  begunAt: number;
}

/** A reading begun this long before the spawn is too old to stand for the GPUs just before it: they are read again. */
const READING_AHEAD_MAX_AGE_MS = 5_000;

/** Reads each GPU's used memory once (with the options' reader where given); never throws. */
export function readGpuUsedNow(options: Pick<ServerOptions, 'readGpuUsed'>): Promise<GpuUsedReading> {
  return (
    options.readGpuUsed ? options.readGpuUsed().then((used) => used && { used, tool: 'nvidia-smi' as const }) : readGpuUsedOnce()
  ).catch(() => null);
}

/** Begins the reading before the spawn now, for a server about to be prepared and started. */
export function readGpuUsedAhead(options: Pick<ServerOptions, 'readGpuUsed'>): GpuReadingAhead {
  return { reading: readGpuUsedNow(options), begunAt: performance.now() };
}

export const DEFAULT_TIMEOUTS: ServerTimeouts = { stallMs: 60_000, hardMs: 10 * 60_000, stopGraceMs: 8000 };
const HEALTH_POLL_MS = 250;

/** What the log has said so far while a server loads, and the wake-up for the health poll. */
interface LoadWatch {
  lastProgress: number;
  listeningAt: number | null;
  wake: () => void;
}

/** When the probe's first token arrived (performance.now()), or null when none came: the end of a cold start. */
async function firstTokenAt(address: ServerAddress): Promise<number | null> {
  const probe = await streamOnce({
    baseUrl: address.baseUrl,
    headers: { ...address.headers },
    body: PROBE_BODY,
    firstTokenTimeoutMs: 120_000,
    totalTimeoutMs: 180_000,
  });
  return probe.contentChunkTimes[0] ?? (probe.error ? null : probe.endAt);
}

const MAX_BIND_ATTEMPTS = 3;

/** The fixed request whose first token ends the cold-start measurement. */
const PROBE_BODY = { messages: [{ role: 'user', content: 'Say hello.' }], max_tokens: 1, temperature: 0, cache_prompt: false };

/**
 * One managed inference server (llama-server, vLLM, SGLang) through its whole life: stopped → starting → ready → stopping →
 * stopped, or crashed / failed. Every change is pushed as a whole snapshot.
 */
export class ManagedServer {
  readonly id = crypto.randomUUID();
  readonly changes = new Emitter<ServerSnapshot>();
  /** Each line the server writes to its log, as it comes. */
  readonly logLines = new Emitter<string>();
  private process: ManagedProcess | null = null;
  private logFile: RotatingLogFile | null = null;
  private snapshotState: ServerSnapshot;
  private stopRequested = false;
  private readonly earlyLines: string[] = [];
  /** Handed to the server through its environment; other local users cannot read or use it. */
  private readonly apiKey = crypto.randomBytes(24).toString('base64url');
  private readingAhead: GpuReadingAhead | null;

  constructor(
    private readonly engine: ManagedEngineAdapter,
    /** The served model, and the draft model's file when the profile drafts with one. */
    private readonly model: {
      ref: string;
      path: string;
      draftPath?: string | null;
      loraAdapters?: readonly LoadedLoraAdapter[];
      projectorPath?: string | null;
    },
    readonly profile: ServerProfile,
    private readonly sessions: ServerSessionStore,
    private readonly logDir: string,
    private readonly options: ServerOptions = { timeouts: DEFAULT_TIMEOUTS, choosePort: () => findFreePort() },
  ) {
    this.readingAhead = options.gpuReadingAhead ?? null;
    this.snapshotState = {
      id: this.id,
      engine: engine.id,
      state: 'stopped',
      modelRef: model.ref,
      modelPath: model.path,
      profileName: profile.name,
      baseUrl: null,
      port: null,
      pid: null,
      startedAt: null,
      readyAt: null,
      coldStart: null,
      effectiveConfig: null,
      fault: null,
    };
  }

  get snapshot(): ServerSnapshot {
    return this.snapshotState;
  }

  /** What every request to this server must carry; never part of the snapshot the UI sees or the records. */
  get authHeaders(): Readonly<Record<string, string>> {
    return this.engine.apiKeyEnv ? { authorization: `Bearer ${this.apiKey}` } : {};
  }

  /** Where the server answers and with which credential, once it has a port. */
  get address(): ServerAddress | null {
    return this.snapshotState.baseUrl ? { baseUrl: this.snapshotState.baseUrl, headers: this.authHeaders } : null;
  }

  /**
   * Empties every slot's prompt cache, so the next request computes its whole prompt. Only
   * engines with slot control can; for others this does nothing and the cache evidence shows it.
   */
  async erasePromptCache(): Promise<void> {
    const address = this.address;
    if (!address || !this.engine.capabilities.slotErase) return;
    await eraseSlots(address, this.snapshotState.effectiveConfig?.slots ?? this.profile.parallelSlots);
  }

  /**
   * Refuses to serve a private run when this server's log keeps request or reply text (a build
   * other than the pinned one may log bodies at the level it is started with), then empties the
   * cache the check filled. See log-privacy.ts.
   */
  async assertLogKeepsNoText(serverPath: string): Promise<void> {
    const address = this.address;
    if (!address) throw new AppError(ErrorCode.ServerStartFailed, `the server ${this.id} is ${this.snapshotState.state}, not ready`);
    const probe = await probeLogPrivacy(address, this.logLines);
    if (probe.leaked) throw logPrivacyRefusal(serverPath, probe.leaked);
    await this.erasePromptCache();
  }

  /** The last lines of the server's log, newest last. */
  logTail(count = 100): string[] {
    return this.process?.logs.last(count) ?? [];
  }

  private update(patch: Partial<ServerSnapshot>): void {
    this.snapshotState = { ...this.snapshotState, ...patch };
    this.changes.emit(this.snapshotState);
  }

  private fault(code: ServerFaultCode, message: string, exit: ProcessExit | null, hint?: string): ServerFault {
    const tail = this.process?.logs.last(30) ?? [];
    const classified = this.engine.classifyFault(tail);
    return {
      code: classified && (code === 'exited_early' || code === 'crashed') ? classified.code : code,
      message,
      hint: hint ?? classified?.hint ?? 'See the log tail for the reason.',
      exitCode: exit?.code ?? null,
      signal: exit?.signal ?? null,
      logTail: tail,
    };
  }

  async start(): Promise<ServerSnapshot> {
    if (this.snapshotState.state !== 'stopped')
      throw new AppError(ErrorCode.InvalidInput, `server ${this.id} is ${this.snapshotState.state}; only a stopped server can start`);
    for (let attempt = 1; ; attempt++) {
      const snapshot = await this.startOnce(await this.options.choosePort());
      // The OS can hand the probed port to someone else before the server binds it.
      if (snapshot.state === 'failed' && snapshot.fault?.code === 'bind_failed' && attempt < MAX_BIND_ATTEMPTS && !this.stopRequested) {
        this.update({ state: 'stopped', fault: null });
        continue;
      }
      return snapshot;
    }
  }

  private async startOnce(port: number): Promise<ServerSnapshot> {
    const { program, args, env } = this.engine.launch({
      modelPath: this.model.path,
      port,
      profile: this.profile,
      draftModelPath: this.model.draftPath ?? null,
      loraAdapters: this.model.loraAdapters ?? [],
      projectorPath: this.model.projectorPath ?? null,
    });
    const baseUrl = `http://127.0.0.1:${port}`;
    const address: ServerAddress = { baseUrl, headers: this.authHeaders };
    const loading: LoadWatch = { lastProgress: Date.now(), listeningAt: null, wake: () => {} };
    const { child, spawnedAt } = await this.spawn(program, args, env, port, loading);

    let exit: ProcessExit | null = null;
    void child.exited.then((result) => {
      exit = result;
      this.onExit(result);
    });
    const ended = () => exit !== null || this.stopRequested;

    const health = await this.awaitHealthy(baseUrl, child, loading, ended);
    if (health === 'ended') return this.failStart(exit, port);
    if (health !== 'ready') return this.refuseStart(health, child);
    const readyAtMs = performance.now();
    const crowded = this.crowdedBy(child.pid);
    if (crowded)
      return this.refuseStart(
        this.fault(
          'oversubscribed',
          crowded,
          null,
          'Stop the other llama-server, lower threads, or pass --force (force: true) to run both.',
        ),
        child,
      );

    const firstToken = this.options.coldStartProbe === false ? null : await firstTokenAt(address);
    const coldStart: ColdStart = {
      spawnToListeningMs: loading.listeningAt === null ? null : loading.listeningAt - spawnedAt,
      spawnToReadyMs: readyAtMs - spawnedAt,
      readyToFirstTokenMs: firstToken === null ? null : firstToken - readyAtMs,
      spawnToFirstTokenMs: firstToken === null ? null : firstToken - spawnedAt,
    };
    if (ended()) return this.failStart(exit, port);
    // Shown in the UI and copied into run records: secret flag values stay with the process.
    const effectiveConfig = await this.engine.readEffectiveConfig(address, this.earlyLines, redactArgv([program, ...args]), child.pid);
    // The probe must not warm anything: a fresh server's first real request has to find its slots empty.
    if (this.engine.capabilities.slotErase && this.options.coldStartProbe !== false)
      await eraseSlots(address, effectiveConfig.slots ?? this.profile.parallelSlots);
    this.record(() => this.sessions.recordReady(this.id, coldStart, effectiveConfig));
    if (ended()) return this.failStart(exit, port);
    this.update({ state: 'ready', readyAt: new Date().toISOString(), coldStart, effectiveConfig });
    return this.snapshotState;
  }

  /** Starts the server's process with its log captured, and records it as starting. */
  private async spawn(
    program: string,
    args: string[],
    env: Readonly<Record<string, string | null>>,
    port: number,
    loading: LoadWatch,
  ): Promise<{ child: ManagedProcess; spawnedAt: number }> {
    const baseUrl = `http://127.0.0.1:${port}`;
    this.earlyLines.length = 0;
    this.logFile?.close();
    this.logFile = new RotatingLogFile(path.join(this.logDir, `${this.id}.log`));
    // What the chosen GPUs held before this server existed: the baseline for its own footprint.
    const reading = await this.gpuReadingBeforeSpawn();
    assertGpusPresent(this.profile.gpuDevices, reading ? [...reading.used.keys()] : null, reading?.tool);
    const gpuUsedBeforeSpawnMib = usedMibOf(reading?.used ?? null, selectedGpuIndexes(this.profile.gpuDevices));
    const spawnedAt = performance.now();
    const child = new ManagedProcess(program, args, {
      keepCredentials: this.engine.keepsCredential,
      grantedEnv: { ...env, ...(this.engine.apiKeyEnv ? { [this.engine.apiKeyEnv]: this.apiKey } : {}) },
      logCapacity: 500,
      onLine: (line) => this.onStartingLine(line, loading),
    });
    this.process = child;
    this.stopRequested = false;
    this.update({
      state: 'starting',
      port,
      baseUrl,
      pid: child.pid ?? null,
      startedAt: new Date().toISOString(),
      readyAt: null,
      coldStart: null,
      effectiveConfig: null,
      fault: null,
      gpuUsedBeforeSpawnMib,
    });
    this.record(() =>
      this.sessions.recordStart({
        id: this.id,
        engine: this.engine.id,
        binary: program,
        argv: args,
        modelRef: this.model.ref,
        modelPath: this.model.path,
        profile: this.profile,
        pid: child.pid ?? null,
        port,
      }),
    );
    return { child, spawnedAt };
  }

  /** The reading begun while this server was prepared, for its first start where it is recent; otherwise one read now. */
  private gpuReadingBeforeSpawn(): Promise<GpuUsedReading> {
    const ahead = this.readingAhead;
    this.readingAhead = null;
    if (ahead && performance.now() - ahead.begunAt < READING_AHEAD_MAX_AGE_MS) return ahead.reading;
    return readGpuUsedNow(this.options);
  }

  /** A log line while starting: kept, passed on, and read for load progress and the "listening" line. */
  private onStartingLine(line: string, loading: LoadWatch): void {
    this.logFile?.write(line);
    if (this.earlyLines.length < 2000) this.earlyLines.push(line);
    this.logLines.emit(line);
    if (this.engine.isLoadProgress(line)) loading.lastProgress = Date.now();
    if (loading.listeningAt === null && this.engine.isListening(line)) {
      loading.listeningAt = performance.now();
      loading.wake();
    }
  }

  /**
   * Polls health until the server answers: 'ready', 'ended' when it exited or a stop was asked
   * for, or the fault when its load stalled or outlasted the hard deadline.
   */
  private async awaitHealthy(
    baseUrl: string,
    child: ManagedProcess,
    loading: LoadWatch,
    ended: () => boolean,
  ): Promise<'ready' | 'ended' | ServerFault> {
    const { stallMs, hardMs } = this.options.timeouts;
    const hardDeadline = Date.now() + hardMs;
    for (;;) {
      if (ended()) return 'ended';
      if (await healthOk(baseUrl + this.engine.healthPath)) return 'ready';
      const now = Date.now();
      const stalled = now - loading.lastProgress > stallMs;
      if (stalled || now > hardDeadline)
        return this.fault(
          stalled ? 'stalled' : 'timeout',
          stalled ? `no loading progress in the log for ${Math.round(stallMs / 1000)} s` : `not ready after ${Math.round(hardMs / 1000)} s`,
          null,
          'The load is hung; check the log, free memory, or lower contextSize / gpuLayers.',
        );
      // The 250 ms poll alone would quantize the ready time; the log's "listening" line wakes it early.
      await Promise.race([delay(HEALTH_POLL_MS), child.exited, new Promise<void>((resolve) => (loading.wake = resolve))]);
    }
  }

  /** A server that came up but may not serve: stopped, with the fault recorded. */
  private async refuseStart(fault: ServerFault, child: ManagedProcess): Promise<ServerSnapshot> {
    this.update({ state: 'failed', fault });
    await child.stop(this.options.timeouts.stopGraceMs);
    this.finishSession('failed', fault);
    return this.snapshotState;
  }

  /** Once loaded, a server yields to any older llama-server that leaves it too few cores (see olderThan). */
  private crowdedBy(pid: number | undefined): string | null {
    if (this.options.force || this.engine.id !== 'llama.cpp' || pid === undefined) return null;
    const own = readProcStat(pid);
    if (!own) return null;
    const cores = os.availableParallelism();
    const exclude = new Set([pid, ...(this.options.siblingPids?.() ?? [])]);
    return oversubscription({ threads: this.profile.threads, cores, others: olderThan(own, findLlamaServers({ cores, exclude })) });
  }

  private async failStart(exit: ProcessExit | null, port: number): Promise<ServerSnapshot> {
    if (this.stopRequested) return this.snapshotState;
    let fault = this.fault(
      'exited_early',
      `llama-server exited before it was ready (exit code ${exit?.code ?? 'none'}, signal ${exit?.signal ?? 'none'})`,
      exit,
    );
    // llama-server logs from a worker thread, so a fast exit can lose its "couldn't bind" line;
    // the port itself still tells whether someone else held it.
    if (fault.code === 'exited_early' && (await isPortInUse(port)))
      fault = {
        ...fault,
        code: 'bind_failed',
        message: `${fault.message}; port ${port} is held by another process`,
        hint: PORT_TAKEN_HINT,
      };
    this.update({ state: 'failed', fault });
    this.finishSession('failed', fault);
    return this.snapshotState;
  }

  private onExit(exit: ProcessExit): void {
    const state = this.snapshotState.state;
    if (state === 'ready') {
      const fault = this.fault(
        'crashed',
        `llama-server exited while ready (exit code ${exit.code ?? 'none'}, signal ${exit.signal ?? 'none'})`,
        exit,
      );
      this.update({ state: 'crashed', fault, pid: null });
      this.finishSession('crashed', fault);
    }
  }

  private finishSession(state: ServerState, fault: ServerFault | null): void {
    this.logFile?.close();
    this.record(() => this.sessions.recordEnd(this.id, state, fault));
  }

  /**
   * Session bookkeeping never takes the server down with it: on a full disk the process is
   * still started and stopped correctly; a session left open is closed by the next sweep.
   */
  private record(write: () => void): void {
    try {
      write();
    } catch (error) {
      this.logTailNote(`could not record the server session: ${(error as Error).message}`);
    }
  }

  private logTailNote(line: string): void {
    this.process?.logs.push(`[inferlab] ${line}`);
  }

  /** SIGTERM to the process group, SIGKILL after the grace period; resolves once it has exited. */
  async stop(): Promise<ServerSnapshot> {
    const child = this.process;
    if (!child || child.hasExited) {
      if (this.snapshotState.state === 'starting') this.update({ state: 'stopped' });
      return this.snapshotState;
    }
    this.stopRequested = true;
    const previous = this.snapshotState.state;
    this.update({ state: 'stopping' });
    await child.stop(this.options.timeouts.stopGraceMs);
    this.update({ state: 'stopped', pid: null });
    if (previous !== 'crashed' && previous !== 'failed') this.finishSession('stopped', null);
    return this.snapshotState;
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function eraseSlots(server: ServerAddress, slots: number): Promise<void> {
  for (let id = 0; id < slots; id++) {
    try {
      const response = await fetch(`${server.baseUrl}/slots/${id}?action=erase`, {
        method: 'POST',
        headers: { ...server.headers },
        signal: AbortSignal.timeout(5000),
      });
      await response.arrayBuffer();
    } catch {
      // A build without slot control keeps the probe's few tokens; the cache evidence will show it.
    }
  }
}

async function healthOk(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
    await response.arrayBuffer();
    return response.status === 200;
  } catch {
    return false;
  }
}
