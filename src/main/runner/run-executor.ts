import { setMaxListeners } from 'node:events';
import { evaluateAcceptance } from '../workload/acceptance';
import type { ResolvedWorkload } from '../workload/workload-types';
import { deriveRequestMetrics } from '../metrics/request-metrics';
import type { RunStore } from '../store/run-store';
import { generateLoad, type LoadOutcome, type LoadSpec, type StopRule } from './load-generator';
import { RequestPlan, requestFor } from './request-plan';
import { RunWriter } from './run-writer';
import { storedRequestFrom } from './stored-request';
import { createKeepAliveAgent, streamCompletion } from './stream-client';

export interface RunTarget {
  baseUrl: string;
  headers?: Record<string, string>;
}

export interface RunProgress {
  sent: number;
  finished: number;
  failed: number;
  warmup: boolean;
  lastTtftMs: number | null;
  /** Send time of the last finished request, ms on the run's clock (shared with telemetry). */
  lastSentAtMs: number | null;
}

export interface RunExecution {
  status: 'completed' | 'aborted' | 'interrupted' | 'failed';
  reason: string | null;
  outcome: LoadOutcome;
  stored: number;
}

/**
 * Runs a resolved workload against a target and stores every request as it finishes.
 * `signal` is the user's cancel (in-flight requests are cancelled, the run is
 * `interrupted`); `serverLost` ends the run `aborted` (no new requests; in-flight ones
 * fail on their own and are kept as failures).
 */
export async function executeRun(options: {
  store: RunStore;
  runId: string;
  workload: ResolvedWorkload;
  target: RunTarget;
  load: LoadSpec;
  stop: StopRule;
  warmup: number;
  timeouts: { firstTokenMs: number; totalMs: number };
  private: boolean;
  references: Map<string, string> | null;
  signal?: AbortSignal;
  serverLost?: Promise<string>;
  seed?: number;
  extraBody?: Record<string, unknown>;
  /** performance.now() at the run's time zero, shared with telemetry so both use one clock. */
  clockOrigin?: number;
  onProgress?: (progress: RunProgress) => void;
  onText?: (seq: number, text: string) => void;
}): Promise<RunExecution> {
  const plan = new RequestPlan(options.workload);
  const runStart = options.clockOrigin ?? performance.now();
  const halt = new AbortController();
  const cancel = new AbortController();
  // Every in-flight request listens on the cancel signal; hundreds at once is expected here.
  setMaxListeners(0, cancel.signal);
  let abortReason: string | null = null;
  const onCancel = () => {
    cancel.abort();
    halt.abort();
  };
  options.signal?.addEventListener('abort', onCancel, { once: true });
  if (options.signal?.aborted) onCancel();
  void options.serverLost?.then((reason) => {
    abortReason ??= reason;
    halt.abort();
  });

  const slots = options.load.mode === 'closed' ? options.load.concurrency : options.load.maxOutstanding;
  const agent = createKeepAliveAgent(slots + 4);
  const writer = new RunWriter(options.store, options.runId, { private: options.private });
  const progress: RunProgress = { sent: 0, finished: 0, failed: 0, warmup: options.warmup > 0, lastTtftMs: null, lastSentAtMs: null };
  // A server that stops answering (hung, stopped, overloaded past every timeout) ends the run
  // instead of letting it time out request by request until the count is reached.
  const timeoutsToGiveUp = Math.max(3, slots);
  const refusalsToGiveUp = Math.max(10, 2 * slots);
  let consecutiveTimeouts = 0;
  let consecutiveRefusals = 0;
  let unresponsive: string | null = null;

  const send = async (seq: number, warmup: boolean, scheduledAt: number | null) => {
    const item = plan.item(seq);
    const request = requestFor(item);
    const path = request.path;
    const body = options.extraBody ? { ...request.body, ...options.extraBody } : request.body;
    progress.sent += 1;
    progress.warmup = warmup;
    const completion = await streamCompletion({
      baseUrl: options.target.baseUrl,
      headers: options.target.headers,
      path,
      body,
      agent,
      firstTokenTimeoutMs: options.timeouts.firstTokenMs,
      totalTimeoutMs: options.timeouts.totalMs,
      signal: cancel.signal,
      onText: options.onText ? (text) => options.onText!(seq, text) : undefined,
    });
    const metrics = deriveRequestMetrics(completion);
    const acceptance = completion.error ? null : evaluateAcceptance(item.checks, completion.text, options.references?.get(item.id) ?? null);
    const promptText = item.messages ? JSON.stringify(item.messages) : item.prompt;
    writer.add(storedRequestFrom(completion, metrics, {
      seq, warmup, group: item.group, itemId: item.id, promptText, runStart, scheduledAt,
      accepted: acceptance?.accepted ?? null, acceptance: acceptance ?? undefined,
    }));
    progress.finished += 1;
    if (completion.error) progress.failed += 1;
    const errorClass = completion.error?.class ?? null;
    consecutiveTimeouts = errorClass === 'first_token_timeout' || errorClass === 'total_timeout' ? consecutiveTimeouts + 1 : 0;
    consecutiveRefusals = errorClass === 'connect' ? consecutiveRefusals + 1 : 0;
    if ((consecutiveTimeouts >= timeoutsToGiveUp || consecutiveRefusals >= refusalsToGiveUp) && !halt.signal.aborted) {
      const count = Math.max(consecutiveTimeouts, consecutiveRefusals);
      unresponsive = `the server stopped responding: ${count} requests in a row failed (${errorClass})`;
      halt.abort();
    }
    progress.lastTtftMs = metrics.ttft_ms;
    progress.lastSentAtMs = completion.t0 - runStart;
    options.onProgress?.(progress);
    // A database that stopped accepting writes ends the run: measuring on would lose results.
    if (writer.failure) {
      abortReason ??= `storing requests failed: ${writer.failure.message}`;
      halt.abort();
    }
  };

  let outcome: LoadOutcome;
  try {
    outcome = await generateLoad({ load: options.load, stop: options.stop, warmup: options.warmup, send, halt: halt.signal, seed: options.seed });
  } finally {
    options.signal?.removeEventListener('abort', onCancel);
    agent.destroy();
    writer.flush();
  }
  if (writer.failure) return { status: 'failed', reason: abortReason ?? writer.failure.message, outcome, stored: writer.written };
  if (options.signal?.aborted) return { status: 'interrupted', reason: 'cancelled by the user', outcome, stored: writer.written };
  // A crash reported by the server manager explains refusals better than counting them does.
  const reason = abortReason ?? unresponsive;
  if (reason) return { status: 'aborted', reason, outcome, stored: writer.written };
  return { status: 'completed', reason: null, outcome, stored: writer.written };
}
