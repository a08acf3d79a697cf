import fs from 'node:fs';
import type { EngineInfo } from '../../shared/contract/engine';
import type { FirstRequestResult } from '../../shared/contract/results';
import type { ServerProfile, ServerSnapshot } from '../../shared/contract/server';
import { ErrorCode } from '../../shared/errors';
import { AppError, throwIfCancelled } from '../core/errors';
import { deriveRequestMetrics } from '../metrics/request-metrics';
import { summarizeRun, type RunSummary } from '../metrics/run-summary';
import { storedRequestFrom } from '../runner/stored-request';
import { identifiedModel } from '../runner/run-target';
import { streamOnce } from '../client/stream-client';
import type { ServerManager } from '../server/server-manager';
import type { RunStore } from '../store/run-store';

export const DEMO_PROMPT = 'Explain in one paragraph why the time to first token grows with the prompt length.';

/** A cold server's first answer may wait on the model's load; the whole answer is short. */
const FIRST_REQUEST_TIMEOUTS = { firstTokenTimeoutMs: 60_000, totalTimeoutMs: 300_000 };

/** The model file's sha256, as a run takes it: said before a long first read, which the cancel stops. */
async function modelDigest(options: {
  model: { ref: string; path: string };
  store: RunStore;
  signal?: AbortSignal;
  onStatus?: (line: string) => void;
}) {
  const { model, store, onStatus, signal } = options;
  return (await identifiedModel(model.ref, model.path, { hashes: store.hashes, onStatus, signal })).sha256;
}

/**
 * The smallest real path through the product: start llama-server on a model, stream one
 * chat completion, measure it, store it as a run, stop the server. Every failure leaves
 * the run marked with the reason and no process behind.
 */
export async function runFirstRequest(options: {
  engine: EngineInfo;
  servers: ServerManager;
  /** A model already resolved with resolveModelRef (so bad input fails before anything starts). */
  model: { ref: string; path: string };
  profile: ServerProfile;
  store: RunStore;
  maxTokens?: number;
  signal?: AbortSignal;
  onStatus?: (line: string) => void;
}): Promise<FirstRequestResult> {
  const maxTokens = options.maxTokens ?? 64;
  // Exactly max_tokens are generated, so the decode measurement has a known length.
  const body = { messages: [{ role: 'user', content: DEMO_PROMPT }], max_tokens: maxTokens, temperature: 0, seed: 42, ignore_eos: true };
  const server = await options.servers.prepare({ modelRef: options.model.ref, profile: options.profile });
  const runId = options.store.createRun({
    kind: 'first-request',
    modelRef: options.model.ref,
    modelPath: options.model.path,
    modelSizeBytes: fs.statSync(options.model.path).size,
    modelSha256: await modelDigest(options),
    engine: options.engine,
    server: { sessionId: server.id, profile: options.profile },
    manifest: { request: body },
  });
  const abort = () => void server.stop();
  options.signal?.addEventListener('abort', abort, { once: true });
  try {
    options.onStatus?.(`starting llama-server on ${options.model.ref}`);
    const ready = await server.start();
    throwIfCancelled(options.signal);
    if (ready.state !== 'ready' || !ready.baseUrl) throw notStarted(ready);
    options.onStatus?.(
      `server ready on port ${ready.port} (spawn → ready ${ready.coldStart?.spawnToReadyMs.toFixed(0)} ms); streaming one completion`,
    );
    const address = { baseUrl: ready.baseUrl, headers: { ...server.authHeaders } };
    const completion = await streamOnce({ ...address, body, ...FIRST_REQUEST_TIMEOUTS, signal: options.signal });
    const metrics = deriveRequestMetrics(completion);
    options.store.addRequests(runId, [
      storedRequestFrom(completion, metrics, { seq: 0, warmup: false, promptText: DEMO_PROMPT, runStart: completion.t0 }),
    ]);
    const result: FirstRequestResult = {
      runId,
      modelRef: options.model.ref,
      modelPath: options.model.path,
      engine: { version: options.engine.version, backend: options.engine.backend },
      coldStart: ready.coldStart,
      serverPid: ready.pid,
      metrics,
      timings: completion.timings,
      promptTokens: completion.usage?.prompt_tokens ?? null,
      finishReason: completion.finishReason,
      outputText: completion.text,
    };
    if (completion.error) {
      const reason = `${completion.error.class}: ${completion.error.message}`;
      options.store.finishRun(runId, 'failed', reason, summaryOf(options.store, runId, 'failed', reason));
      throw new AppError(
        ErrorCode.RequestFailed,
        `The streamed request failed (${completion.error.class}): ${completion.error.message}\nServer log:\n${server.logTail(20).join('\n')}`,
      );
    }
    options.store.finishRun(runId, 'completed', null, summaryOf(options.store, runId, 'completed', null));
    return result;
  } catch (error) {
    if (options.store.getRun(runId)?.status === 'running') {
      const status = options.signal?.aborted ? 'interrupted' : 'failed';
      options.store.finishRun(runId, status, error instanceof Error ? error.message.split('\n')[0]! : String(error), undefined);
    }
    throw error;
  } finally {
    options.signal?.removeEventListener('abort', abort);
    await server.stop();
  }
}

/** The run summary every run stores, over its one request: so lists, comparisons and exports read it like any other run. */
function summaryOf(store: RunStore, runId: string, status: string, reason: string | null): RunSummary {
  return summarizeRun({
    runId,
    status,
    statusReason: reason,
    workload: { name: null, revision: null },
    rows: store.measuredRequests(runId),
    load: { mode: 'closed', concurrency: 1 },
    slo: null,
  });
}

/** The start failure as the user reads it: what went wrong, the hint, and the server's last log lines. */
function notStarted(ready: ServerSnapshot): AppError {
  return new AppError(
    ErrorCode.ServerStartFailed,
    `${ready.fault?.message ?? 'llama-server did not start'}\n  hint: ${ready.fault?.hint ?? ''}\nLast log lines:\n${(ready.fault?.logTail ?? []).slice(-15).join('\n')}`,
    { fault: ready.fault },
  );
}
