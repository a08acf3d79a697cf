import fs from 'node:fs';
import type { EngineInfo } from '../../shared/contract/engine';
import type { RequestMetrics, ServerTimings } from '../../shared/contract/measurement';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { sha256File } from '../core/hash';
import { defaultLlamaServerSettings, type LlamaServerSettings } from '../engines/llamacpp/launch-args';
import { deriveRequestMetrics } from '../metrics/request-metrics';
import { createKeepAliveAgent, streamCompletion } from '../runner/stream-client';
import { LlamaServerProcess } from '../server/llama-server-process';
import type { RunStore } from '../store/run-store';

export interface FirstRequestResult {
  runId: string;
  modelRef: string;
  modelPath: string;
  serverReadyMs: number;
  serverPid: number;
  metrics: RequestMetrics;
  timings: ServerTimings | null;
  promptTokens: number | null;
  finishReason: string | null;
  outputText: string;
}

export const DEMO_PROMPT = 'Explain in one paragraph why the time to first token grows with the prompt length.';

/**
 * The smallest real path through the product: start llama-server on a model, stream one
 * chat completion, measure it, store it as a run, stop the server. Every failure leaves
 * the run marked with the reason and no process behind.
 */
export async function runFirstRequest(options: {
  engine: EngineInfo;
  /** A model already resolved with resolveModelRef (so bad input fails before anything starts). */
  model: { ref: string; path: string };
  store: RunStore;
  maxTokens?: number;
  settings?: Partial<LlamaServerSettings>;
  signal?: AbortSignal;
  onStatus?: (line: string) => void;
}): Promise<FirstRequestResult> {
  const modelPath = options.model.path;
  const settings = { ...defaultLlamaServerSettings(), ...options.settings };
  const maxTokens = options.maxTokens ?? 64;
  const body = {
    messages: [{ role: 'user', content: DEMO_PROMPT }],
    max_tokens: maxTokens,
    temperature: 0,
    seed: 42,
    // Generate exactly max_tokens so the decode measurement has a known length.
    ignore_eos: true,
  };
  const runId = options.store.createRun({
    kind: 'first-request',
    modelRef: options.model.ref,
    modelPath,
    modelSizeBytes: fs.statSync(modelPath).size,
    modelSha256: await sha256File(modelPath),
    engine: options.engine,
    server: { settings },
    manifest: { request: body },
  });
  const server = new LlamaServerProcess(options.engine, modelPath, settings);
  try {
    options.onStatus?.(`starting llama-server on ${options.model.ref}`);
    const ready = await server.start();
    if (options.signal?.aborted) throw new AppError(ErrorCode.RequestFailed, 'cancelled');
    options.onStatus?.(`server ready on port ${ready.port} after ${ready.readyMs.toFixed(0)} ms; streaming one completion`);
    const agent = createKeepAliveAgent(1);
    const completion = await streamCompletion({ baseUrl: ready.baseUrl, body, agent, firstTokenTimeoutMs: 60_000, totalTimeoutMs: 300_000, signal: options.signal });
    agent.destroy();
    const metrics = deriveRequestMetrics(completion);
    options.store.addRequests(runId, [{
      seq: 0,
      warmup: false,
      t0Ms: 0,
      headersMs: completion.headersAt === null ? null : completion.headersAt - completion.t0,
      metrics,
      promptTokens: completion.usage?.prompt_tokens ?? null,
      usage: completion.usage,
      finishReason: completion.finishReason,
      httpStatus: completion.httpStatus,
      errorClass: completion.error?.class ?? null,
      errorMessage: completion.error?.message ?? null,
      timings: completion.timings,
      chunkOffsetsMs: completion.contentChunkTimes.map((time) => time - completion.t0),
      promptText: DEMO_PROMPT,
      outputText: completion.text,
    }]);
    const result: FirstRequestResult = {
      runId,
      modelRef: options.model.ref,
      modelPath,
      serverReadyMs: ready.readyMs,
      serverPid: ready.pid,
      metrics,
      timings: completion.timings,
      promptTokens: completion.usage?.prompt_tokens ?? null,
      finishReason: completion.finishReason,
      outputText: completion.text,
    };
    if (completion.error) {
      options.store.finishRun(runId, 'failed', `${completion.error.class}: ${completion.error.message}`, summaryOf(result));
      throw new AppError(ErrorCode.RequestFailed, `The streamed request failed (${completion.error.class}): ${completion.error.message}\nServer log:\n${server.logs}`);
    }
    options.store.finishRun(runId, 'completed', null, summaryOf(result));
    return result;
  } catch (error) {
    if (options.store.getRun(runId)?.status === 'running') {
      const status = options.signal?.aborted ? 'interrupted' : 'failed';
      options.store.finishRun(runId, status, error instanceof Error ? error.message.split('\n')[0]! : String(error), undefined);
    }
    throw error;
  } finally {
    await server.stop();
  }
}

function summaryOf(result: FirstRequestResult): Record<string, unknown> {
  const { itl_ms: itl, ...scalars } = result.metrics;
  return { ...scalars, itl_ms_count: itl.length, server_ready_ms: result.serverReadyMs, timings: result.timings, prompt_tokens: result.promptTokens, finish_reason: result.finishReason };
}
