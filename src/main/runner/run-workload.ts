import { selectedGpuIndexes } from '../../shared/gpu-devices';
import type { EngineInfo } from '../../shared/contract/engine';
import type { ClientLoad, ShardLoad } from '../../shared/contract/runs';
import { ErrorCode } from '../../shared/errors';
import { AppError, throwIfCancelled } from '../core/errors';
import { telemetryIntervalMs } from '../core/config';
import { workloadServes } from '../workload/workload-serves';
import { embeddingsSummary } from '../metrics/embeddings-summary';
import { imagesSummary } from '../metrics/images-summary';
import { ImageLogReader } from '../engines/llamacpp/log-images';
import { showsImages } from '../workload/item-images';
import { missingDraftReason, summarizeRun, type LoadDescription, type RunSummary, type SloSpec } from '../metrics/run-summary';
import type { ServerManager } from '../server/server-manager';
import type { RunStore } from '../store/run-store';
import { resolveWorkload } from '../workload/resolve-workload';
import {
  estimatingTokenCounter,
  llamaServerTokenCounter,
  rememberingTokenCounter,
  tokenizerIdentity,
  type TokenCounter,
} from '../workload/token-counter';
import type { ResolvedWorkload, WorkloadDef } from '../workload/workload-types';
import { TelemetrySession } from '../telemetry/telemetry-session';
import { EarlyGpuLoops } from '../telemetry/gpu-sampler';
import { engineOffTheGpu, gpuEnergyAsContext } from '../telemetry/window-energy';
import { captureEnvironment } from './environment';
import { describeGpuOffload } from './gpu-offload';
import { runDecodeBandwidth } from './run-bandwidth';
import { bandwidthUnavailable } from '../metrics/decode-bandwidth';
import { userCacheDir } from '../core/paths';
import type { LoadSpec, StopRule } from './load-generator';
import { executeRun, type RunExecution, type RunProgress } from './run-executor';
import { measuredWindowClientLoad } from './client-load';
import { tokenRangeFor, type TokenRange } from '../workload/trace';
import { connectTarget, type ConnectedTarget, type RunTargetSpec } from './run-target';

export interface RunRequest {
  workload: { def: WorkloadDef; file: string };
  target: RunTargetSpec;
  /** A Prometheus URL to scrape for endpoint runs (a managed server's own /metrics is used otherwise). */
  metricsUrl?: string | null;
  /** A GPU exporter's Prometheus page (dcgm-exporter, AMD's device-metrics-exporter): GPU telemetry of the machine the server is on. */
  gpuMetricsUrl?: string | null;
  /** Idle sampling before the measured window, for the telemetry baseline. */
  baselineMs?: number;
  /** How often telemetry samples; else INFERLAB_TELEMETRY_INTERVAL_MS, the config file's telemetry.intervalMs or 250 ms. */
  telemetryIntervalMs?: number;
  load: LoadSpec;
  stop: { requests: number | null; durationMs: number | null };
  warmup: number;
  slo: SloSpec | null;
  timeouts: { firstTokenMs: number; totalMs: number };
  private: boolean;
  referenceRunId: string | null;
  /** Fields merged into every request body (e.g. `cache_prompt: false` for a cold-cache condition). */
  extraBody?: Record<string, unknown>;
}

export interface RunResult {
  summary: RunSummary;
  workload: ResolvedWorkload;
}

const rampOf = (load: LoadSpec) => (load.rampUp ? { ramp_up: { shape: load.rampUp.shape, seconds: load.rampUp.ms / 1000 } } : {});

function describeLoad(load: LoadSpec): LoadDescription {
  return load.mode === 'closed'
    ? { mode: 'closed', concurrency: load.concurrency, ...rampOf(load) }
    : {
        mode: 'open',
        rate: load.rate,
        burstiness: load.burstiness,
        max_outstanding: load.maxOutstanding,
        ...(load.shards === undefined || load.shards <= 1 ? {} : { shards: load.shards }),
        ...(load.seed === undefined ? {} : { seed: load.seed }),
        ...rampOf(load),
      };
}

/** The open-loop load of a replayed trace: its arrival times, at the mean rate they imply; null for other workloads. */
function replayLoad(
  workload: ResolvedWorkload,
  asked: LoadSpec,
  requestLimit: number | null,
): { load: LoadSpec; description: { requests: number; span_ms: number } } | null {
  const schedule = workload.groups.flatMap((group) => group.items.flatMap((item) => (item.replay ? [item.replay.arrival_ms] : [])));
  if (schedule.length === 0) return null;
  const span = schedule[schedule.length - 1]! - schedule[0]!;
  // A run cut short by --requests replays the trace's opening part: the record says how much of it, not the whole file.
  const replayed = Math.min(schedule.length, requestLimit ?? schedule.length);
  return {
    load: {
      mode: 'open',
      rate: span > 0 ? ((schedule.length - 1) * 1000) / span : 1,
      burstiness: 1,
      maxOutstanding: asked.mode === 'open' ? asked.maxOutstanding : 256,
      ...(asked.mode === 'open' && asked.shards !== undefined ? { shards: asked.shards } : {}),
      schedule,
    },
    description: { requests: replayed, span_ms: schedule[replayed - 1]! - schedule[0]! },
  };
}

/** The server's vocabulary size (llama-server reports it with its model list), or null when it does not say. */
async function vocabularySize(url: string, headers: Record<string, string>): Promise<number | null> {
  try {
    const response = await fetch(`${url}/v1/models`, { headers, signal: AbortSignal.timeout(10_000) });
    if (!response.ok) return null;
    const body = (await response.json()) as { data?: { meta?: { n_vocab?: unknown } }[] };
    const size = body.data?.[0]?.meta?.n_vocab;
    return typeof size === 'number' && Number.isInteger(size) && size > 0 ? size : null;
  } catch {
    return null;
  }
}

/** Items whose output could not fit the server's per-request context: refused before anything is stored. */
function assertFitsContext(workload: ResolvedWorkload, file: string, contextPerSlot: number | null): void {
  if (contextPerSlot === null) return;
  const tooLong = workload.groups
    .flatMap((group) => group.items)
    // An embeddings input (or a reranked document) is a sequence of its own and generates nothing: only its own length counts.
    .filter(
      (item) => (item.embedding_inputs || item.rerank ? 0 : item.sampling.max_tokens) + (item.target_input_tokens ?? 0) > contextPerSlot,
    );
  if (tooLong.length > 0) {
    const names = tooLong
      .slice(0, 5)
      .map(
        (item) =>
          `${item.id} (max_tokens ${item.sampling.max_tokens}${item.target_input_tokens ? ` + ${item.target_input_tokens} input` : ''})`,
      )
      .join(', ');
    throw new AppError(
      ErrorCode.InvalidInput,
      `${file}: max_tokens beyond the server's context of ${contextPerSlot} tokens per request for ${names}${tooLong.length > 5 ? ` and ${tooLong.length - 5} more` : ''}; lower max_tokens or raise the profile's contextSize`,
    );
  }
}

/** How many requests (or how long) the run goes on: asked for, else every item of the workload once per repeat and weight. */
function stopRuleFor(request: RunRequest, workload: ResolvedWorkload): StopRule {
  return {
    requests:
      request.stop.requests ??
      (request.stop.durationMs === null
        ? workload.groups.reduce((sum, group) => sum + group.items.reduce((n, item) => n + item.repeat * item.weight, 0), 0)
        : null),
    durationMs: request.stop.durationMs,
  };
}

/** What the run was asked to do, stored with it: enough to run it again the same way. */
function runManifest(request: RunRequest, target: ConnectedTarget, workload: ResolvedWorkload, load: LoadDescription, stop: StopRule) {
  const server = target.server;
  return {
    workload: { name: workload.name, revision: workload.revision, source: workload.source },
    target:
      request.target.kind === 'endpoint'
        ? { kind: 'endpoint', url: target.baseUrl }
        : {
            kind: 'model',
            model: request.target.modelRef,
            profile: request.target.kind === 'model' ? request.target.profile : undefined,
            server_session: server?.id,
          },
    load,
    stop,
    warmup: request.warmup,
    slo: request.slo,
    timeouts: request.timeouts,
    private: request.private,
    extra_body: request.extraBody ?? null,
    reference_run_id: request.referenceRunId,
    gpu_offload:
      request.target.kind === 'endpoint' ? null : describeGpuOffload(target.engineInfo as EngineInfo, server?.effectiveConfig ?? null),
    sampling_note: 'per-item sampling settings are part of the workload revision',
  };
}

function startLine(runId: string, stop: StopRule, load: LoadDescription & { replayed_trace?: { span_ms: number } }): string {
  const pace =
    load.mode === 'closed'
      ? `concurrency ${load.concurrency}`
      : load.replayed_trace
        ? `replaying a trace over ${(load.replayed_trace.span_ms / 1000).toFixed(1)} s`
        : `${load.rate} req/s`;
  return `run ${runId}: ${stop.requests ?? '∞'} requests${stop.durationMs ? ` or ${stop.durationMs / 1000} s` : ''}, ${pace}`;
}

/** Telemetry for the run: the managed server's process and /metrics, or an endpoint's, and the GPUs it uses. */
function runTelemetry(
  request: RunRequest,
  target: ConnectedTarget,
  clockOrigin: number,
  sampling: { intervalMs: number; earlyGpuLoops: EarlyGpuLoops | null },
): TelemetrySession {
  const { server, baseUrl, headers } = target;
  return new TelemetrySession({
    clock: () => performance.now() - clockOrigin,
    serverPid: server?.pid ?? null,
    metricsUrl: server ? `${baseUrl}/metrics` : (request.metricsUrl ?? null),
    // An endpoint's own /metrics gets the endpoint's key; a metrics URL elsewhere gets none.
    metricsHeaders: server || (request.metricsUrl && new URL(request.metricsUrl).origin === new URL(baseUrl).origin) ? headers : {},
    beforeLoadUsedMib: server?.gpuUsedBeforeSpawnMib ?? null,
    intervalMs: sampling.intervalMs,
    earlyGpuLoops: sampling.earlyGpuLoops,
    endpointUrl: request.target.kind === 'endpoint' ? baseUrl : null,
    gpuMetricsUrl: request.gpuMetricsUrl ?? null,
    gpuIndexes: selectedGpuIndexes(target.profile?.gpuDevices),
  });
}

/** How many texts each item of an embeddings or reranking workload sends per request: inputs, or documents. */
function textsByItem(workload: ResolvedWorkload): Map<string, number> {
  return new Map(
    workload.groups.flatMap((group) =>
      group.items.map((item) => [item.id, item.embedding_inputs?.length ?? item.rerank?.documents.length ?? 0] as const),
    ),
  );
}

/** The client's load with each stream shard's, when shards sent the requests. */
function withShards(load: ClientLoad | null, shards: ShardLoad[] | null): ClientLoad | null {
  return load && shards ? { ...load, shards } : load;
}

/**
 * The run's summary from what was stored, with its offload and decode bandwidth, saved with
 * its telemetry. A run that stored requests keeps them whatever fails here.
 */
async function finishMeasuredRun(input: {
  store: RunStore;
  runId: string;
  request: RunRequest;
  target: ConnectedTarget;
  workload: ResolvedWorkload;
  load: LoadDescription;
  execution: RunExecution;
  telemetry: TelemetrySession;
  clientLoad: ClientLoad | null;
  offload: RunSummary['gpu_offload'];
  /** What the managed server's log said of the run's pictures; undefined where the run showed none to a managed server. */
  images?: RunSummary['images'];
}): Promise<RunSummary> {
  const { store, runId, request, target, workload, execution, telemetry } = input;
  const server = target.server;
  const rows = store.measuredRequests(runId);
  const draftModel = target.profile?.draftModel ?? null;
  const draftFailure = draftModel === null ? null : missingDraftReason(draftModel, rows);
  const run = {
    runId,
    status: draftFailure ? 'failed' : execution.status,
    statusReason: draftFailure ?? execution.reason,
    workload: { name: workload.name, revision: workload.revision },
  };
  const summary = summarizeRun({
    ...run,
    rows,
    load: input.load,
    slo: request.slo,
    telemetry: telemetry.summary(),
    serverSlots: server?.effectiveConfig?.slots ?? target.endpointSlots,
    clientLoad: input.clientLoad,
  });
  const serves = workloadServes(request.workload.def);
  if (serves === 'embeddings' || serves === 'rerank')
    summary[serves] = embeddingsSummary(rows, store.measuredSuccessesByItem(runId), textsByItem(workload));
  if (input.images !== undefined) summary.images = input.images;
  summary.gpu_offload = input.offload;
  const offTheGpu = engineOffTheGpu(input.offload);
  if (offTheGpu && summary.telemetry?.energy)
    summary.telemetry = { ...summary.telemetry, energy: gpuEnergyAsContext(summary.telemetry.energy, offTheGpu) };
  summary.decode_bandwidth = await runDecodeBandwidth({
    modelPath: request.target.kind === 'endpoint' ? null : target.model.path,
    effectiveConfig: server?.effectiveConfig ?? null,
    offload: input.offload ?? null,
    summary,
    rows,
    cacheDir: userCacheDir(),
  }).catch((error: Error) => bandwidthUnavailable(`not computed: ${error.message}`));
  try {
    store.saveTelemetry(runId, telemetry.series());
    store.finishRun(runId, run.status, run.statusReason, summary, rows);
  } catch (error) {
    // The requests already stored stay; the run is marked interrupted at the next start.
    throw new AppError(
      ErrorCode.StorageFailed,
      `The run's ${execution.stored} stored requests are kept, but the run could not be finished in the database: ${(error as Error).message}. Free space (or pick another --db); the next start marks it interrupted.`,
    );
  }
  if (execution.status === 'failed' && execution.reason?.startsWith('storing requests failed')) {
    throw new AppError(
      ErrorCode.StorageFailed,
      `Run ${runId} stopped: ${execution.reason}. ${execution.stored} requests were stored before that and are intact.`,
    );
  }
  return summary;
}

/**
 * One measured run from start to stored summary: start the server (or check the
 * endpoint), resolve the workload with the engine's tokenizer, record the environment,
 * drive the load, summarize from what was stored.
 */
export async function runWorkload(options: RunWorkloadOptions): Promise<RunResult> {
  const { request, store } = options;
  const serves = workloadServes(request.workload.def);
  const intervalMs = request.telemetryIntervalMs ?? telemetryIntervalMs();
  // nvidia-smi's loops begin while the server loads: the idle baseline after the load then does not wait for the tool's start.
  const earlyGpuLoops = request.target.kind === 'model' && !request.gpuMetricsUrl ? EarlyGpuLoops.begin(intervalMs) : null;
  let target: ConnectedTarget;
  try {
    target = await connectTarget(request.target.kind === 'model' ? { ...request.target, serves } : request.target, options);
  } catch (error) {
    await earlyGpuLoops?.stop();
    throw error;
  }
  const { server, engineInfo, model: modelInfo } = target;
  const imageLog = imageLogOf(target, request);

  let telemetry: TelemetrySession | null = null;
  try {
    throwIfCancelled(options.signal, 'cancelled before the run started');
    await assertPrivateLogKeepsNoText(options, target);
    // Sampling starts before the workload is resolved: the GPU tool's own start (seconds for
    // nvidia-smi on some drivers) then overlaps the tokenizing, and the idle baseline counts from here.
    const clockOrigin = performance.now();
    telemetry = runTelemetry(request, target, clockOrigin, { intervalMs, earlyGpuLoops });
    telemetry.start();
    const { counter, workload, references, environment, runLoad, load, tokenRange, stopRule, manifest } = await prepareRun(options, target);
    const runId = store.createRun({
      kind: 'workload',
      modelRef: modelInfo.ref,
      modelPath: modelInfo.path,
      modelSizeBytes: modelInfo.size,
      modelSha256: modelInfo.sha256,
      engine: engineInfo,
      server: server ? { sessionId: server.id, effectiveConfig: server.effectiveConfig, coldStart: server.coldStart } : null,
      manifest,
      workload,
      environment,
      private: request.private,
    });
    options.onRunCreated?.(runId);
    options.onStatus?.(startLine(runId, stopRule, load));
    options.onTelemetry?.(telemetry);
    const { execution, clientLoad } = await driveLoad(options, {
      runId,
      target,
      workload,
      runLoad,
      tokenRange,
      stopRule,
      references,
      counter,
      telemetry,
      clockOrigin,
      imageLog: imageLog?.reader ?? null,
    });
    await telemetry.stop();
    const summary = await finishMeasuredRun({
      store,
      runId,
      request,
      target,
      workload,
      load,
      execution,
      telemetry,
      clientLoad: withShards(clientLoad.stop(), execution.shards),
      offload: manifest.gpu_offload,
      images: imageLog ? imagesSummary(imageLog.reader.figures()) : undefined,
    });
    return { summary, workload };
  } finally {
    imageLog?.stop();
    // A run that failed before its load began stops its samplers here; stopping twice is a no-op.
    await telemetry?.stop().catch(() => {});
    // Loops the sampler did not take over (the run ended before sampling began) stop here.
    await earlyGpuLoops?.stop().catch(() => {});
    // Stopping must not replace the error that ended the run.
    await target.release().catch(() => {});
  }
}

/**
 * Where a run shows pictures to a server Infer Lab manages, its log lines are read while the run
 * lasts for what they say of encoding and decoding each picture; an endpoint's log is not at hand.
 * Only such a run has an images part in its summary, null there meaning the log said nothing of them.
 */
function imageLogOf(target: ConnectedTarget, request: RunRequest): { reader: ImageLogReader; stop: () => void } | null {
  if (!target.managed || !showsImages(request.workload.def)) return null;
  const reader = new ImageLogReader();
  return { reader, stop: target.managed.logLines.on((line) => reader.read(line)) };
}

/** The log-privacy check a private run asks of an unpinned build: it sends a request, so it comes before the idle baseline. */
async function assertPrivateLogKeepsNoText(options: RunWorkloadOptions, target: ConnectedTarget): Promise<void> {
  const { managed, engineInfo } = target;
  // The pinned build logs no request or reply text at its launch level (test/integration/private-marker.test.ts); any other build is asked.
  if (options.request.private && managed && (engineInfo as EngineInfo).origin !== 'managed') {
    options.onStatus?.('checking that this llama-server keeps no request text in its log');
    await managed.assertLogKeepsNoText((engineInfo as EngineInfo).serverPath);
  }
}

type RunWorkloadOptions = {
  request: RunRequest;
  store: RunStore;
  servers: ServerManager;
  engine: () => Promise<EngineInfo>;
  signal?: AbortSignal;
  onStatus?: (line: string) => void;
  onProgress?: (progress: RunProgress) => void;
  /** Streamed text of each request as it arrives (seq, piece). */
  onText?: (seq: number, text: string) => void;
  /** Called once the run row exists. */
  onRunCreated?: (runId: string) => void;
  /** Receives the run's telemetry session once it exists, for live views. */
  onTelemetry?: (session: TelemetrySession) => void;
  /** Awaited after the warmup, before the first measured request: where runs that start together meet. */
  atStartLine?: () => Promise<void>;
};

/**
 * Everything a run needs before its row exists: the workload resolved with the target's
 * tokenizer, the environment, the load (a replayed trace's own), the stop rule and the manifest.
 */
async function prepareRun(options: RunWorkloadOptions, target: ConnectedTarget) {
  const { request, store } = options;
  const { baseUrl, headers, server } = target;
  // Read while the workload is tokenized: the inventory is mostly waiting on other processes.
  const environment = captureEnvironment();
  const counter = request.target.kind === 'endpoint' ? estimatingTokenCounter : managedServerCounter(target);
  options.onStatus?.(`resolving workload ${request.workload.def.name}`);
  const workload = await resolveWorkload(request.workload.def, request.workload.file, counter);
  assertFitsContext(workload, request.workload.file, server?.effectiveConfig?.contextPerSlot ?? null);
  const references = request.referenceRunId ? store.referenceOutputs(request.referenceRunId) : null;
  // A replayed trace brings its own arrival times: they replace the asked-for load.
  const replay = replayLoad(workload, request.load, request.stop.requests);
  const runLoad = replay?.load ?? request.load;
  const load = { ...describeLoad(runLoad), ...(replay ? { replayed_trace: replay.description } : {}) };
  const tokenRange = replay ? tokenRangeFor(await vocabularySize(baseUrl, headers)) : undefined;
  const stopRule = stopRuleFor(request, workload);
  const manifest = runManifest(request, target, workload, load, stopRule);
  return { counter, workload, references, environment: await environment, runLoad, load, tokenRange, stopRule, manifest };
}

/** The managed server's tokenizer, its counts remembered for this process; a model not yet hashed is asked every time. */
function managedServerCounter(target: ConnectedTarget): TokenCounter {
  const counter = llamaServerTokenCounter({ baseUrl: target.baseUrl, headers: target.headers });
  const engine = target.engineInfo as EngineInfo;
  if (!target.model.sha256) return counter;
  return rememberingTokenCounter(
    counter,
    tokenizerIdentity({ engine, modelSha256: target.model.sha256, extraFlags: target.profile?.extraFlags ?? [] }),
  );
}

/**
 * The load itself, with telemetry's idle baseline before it and the measured window marked
 * where the warmup ends; a run that fails here is stored as failed, with its telemetry stopped.
 */
async function driveLoad(
  options: RunWorkloadOptions,
  run: {
    runId: string;
    target: ConnectedTarget;
    workload: ResolvedWorkload;
    runLoad: LoadSpec;
    tokenRange: TokenRange | undefined;
    stopRule: StopRule;
    references: Map<string, string> | null;
    counter: TokenCounter;
    telemetry: TelemetrySession;
    clockOrigin: number;
    imageLog: ImageLogReader | null;
  },
) {
  const { request } = options;
  const { runId, workload, runLoad, tokenRange, stopRule, references, counter, telemetry, clockOrigin } = run;
  const { baseUrl, headers, serverLost } = run.target;
  const clientLoad = measuredWindowClientLoad();
  let execution;
  try {
    await telemetry.idleBaseline(request.baselineMs);
    execution = await executeRun({
      store: options.store,
      runId,
      workload,
      target: { baseUrl, headers },
      load: runLoad,
      tokenRange,
      // An endpoint's tokenizer cannot be asked: only token-id prompts get block hashes there.
      hashServer: request.target.kind === 'endpoint' ? null : { baseUrl, headers },
      stop: stopRule,
      warmup: request.warmup,
      timeouts: request.timeouts,
      private: request.private,
      references,
      signal: options.signal,
      serverLost,
      onProgress: options.onProgress,
      onText: options.onText,
      clockOrigin,
      extraBody: request.extraBody,
      afterLoadTokenCounter: counter,
      atStartLine: options.atStartLine,
      // The measured window opens once the warmup requests are done and any ramp is over.
      onMeasuredStart: () => {
        telemetry.markWindowStart();
        clientLoad.start();
        run.imageLog?.markWindowStart();
      },
    });
    telemetry.markWindowEnd();
    clientLoad.stop();
  } catch (error) {
    clientLoad.stop();
    // The caller's finally stops the samplers.
    options.store.finishRun(runId, 'failed', (error as Error).message, undefined);
    throw error;
  }
  return { execution, clientLoad };
}
