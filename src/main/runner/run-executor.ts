import { setMaxListeners } from 'node:events';
import { evaluateAcceptanceAsync } from '../workload/acceptance';
import type { ChatMessage, ResolvedConversation, ResolvedItem, ResolvedWorkload } from '../workload/workload-types';
import { seededRandom } from '../core/random';
import { deriveRequestMetrics } from '../metrics/request-metrics';
import type { TokenCounter } from '../workload/token-counter';
import type { RunStore } from '../store/run-store';
import { generateLoad, type LoadOutcome, type LoadSpec, type StopRule } from './load-generator';
import { RequestPlan, replayRequest, requestFor } from './request-plan';
import { tokenRangeFor, type TokenRange } from '../workload/trace';
import type { ServerAddress } from '../core/server-address';
import { blockHashes, hashSentPrompts, type SentPrompt } from './block-hashes';
import { RunWriter } from './run-writer';
import { storedRequestFrom } from './stored-request';
import { createKeepAliveAgent, streamCompletion, type StreamedCompletion } from '../client/stream-client';
import { drawThinkTime, pauseUntil } from './think-time';
import { ResponsivenessWatch } from './responsiveness-watch';

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
  /** Requests the run will make in all, warmup included, when a count ends it. */
  total: number | null;
  /** The measured duration, when time ends the run. */
  durationMs: number | null;
}

export interface RunExecution {
  status: 'completed' | 'aborted' | 'interrupted' | 'failed';
  reason: string | null;
  outcome: LoadOutcome;
  stored: number;
}

/** How long a run stopped by refused connections waits for the server manager to report a crash. */
const SERVER_LOSS_GRACE_MS = 2000;

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
  onMeasuredStart?: () => void;
  /** A llama-server to tokenize text and chat prompts for their block hashes; null for an endpoint. */
  hashServer?: ServerAddress | null;
  /** Token ids a replayed trace's prompts may use (from the server's vocabulary size). */
  tokenRange?: TokenRange;
  onText?: (seq: number, text: string) => void;
  /** Counts reasoning text in the server's tokens once the load is over; null or inexact: left uncounted, with the reason. */
  reasoningTokenCounter?: TokenCounter | null;
}): Promise<RunExecution> {
  const plan = new RequestPlan(options.workload);
  const runStart = options.clockOrigin ?? performance.now();
  const halt = new AbortController();
  const cancel = new AbortController();
  // Every in-flight request listens on the cancel signal, and every thinking user on the halt signal; hundreds at once is expected here.
  setMaxListeners(0, cancel.signal);
  setMaxListeners(0, halt.signal);
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
  const progress: RunProgress = {
    sent: 0,
    finished: 0,
    failed: 0,
    warmup: options.warmup > 0,
    lastTtftMs: null,
    lastSentAtMs: null,
    // A conversation is one send but several requests: the count is of conversations, not requests.
    total: options.stop.requests === null || plan.hasConversations ? null : options.stop.requests + options.warmup,
    durationMs: options.stop.durationMs,
  };
  const responsiveness = new ResponsivenessWatch(slots);
  let unresponsive: string | null = null;
  // Kept in memory (private runs store no text) until the load is over and they can be counted.
  const reasoningTexts = new Map<number, string>();
  // Stored sequence numbers: one per request, so a conversation's turns each get their own.
  let nextSeq = 0;
  // Block hashes: token-id prompts hashed as they go; text and chat prompts kept (in memory only) to be tokenized after the load.
  const promptHashes = new Map<number, string[]>();
  const promptsToHash = new Map<number, SentPrompt>();
  const thinkRandom = seededRandom(options.seed ?? 1);

  /** Sends one request and stores it; resolves with what streamed back. */
  const sendOne: SendOne = async (item, request, warmup, scheduledAt, place) => {
    const seq = nextSeq++;
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
    const metrics = deriveRequestMetrics(completion, { scheduledAt });
    // The answer alone is judged: reasoning is the model's working, not its reply.
    const acceptance = completion.error
      ? null
      : await evaluateAcceptanceAsync(item.checks, completion.text, options.references?.get(referenceKey(item, place)) ?? null);
    if (completion.reasoningText) reasoningTexts.set(seq, completion.reasoningText);
    const messages = request.body.messages as unknown[] | undefined;
    const prompt = request.body.prompt as string | number[] | undefined;
    if (Array.isArray(prompt)) promptHashes.set(seq, blockHashes(prompt));
    else if (messages) promptsToHash.set(seq, { kind: 'chat', messages });
    else if (typeof prompt === 'string') promptsToHash.set(seq, { kind: 'text', text: prompt });
    // A replayed prompt is token ids: stored (or hashed) as their JSON list.
    const promptText = messages ? JSON.stringify(messages) : typeof prompt === 'string' ? prompt : prompt ? JSON.stringify(prompt) : null;
    writer.add(
      storedRequestFrom(completion, metrics, {
        seq,
        warmup,
        group: item.group,
        itemId: place ? `${item.id}#${place.turn}` : item.id,
        promptText,
        runStart,
        scheduledAt,
        accepted: acceptance?.accepted ?? null,
        acceptance: acceptance ?? undefined,
        session: place?.session ?? null,
        turn: place?.turn ?? null,
      }),
    );
    progress.finished += 1;
    if (completion.error) progress.failed += 1;
    const gone = responsiveness.record(completion.error?.class ?? null);
    if (gone !== null && !halt.signal.aborted) {
      unresponsive = gone;
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
    return completion;
  };

  const send = async (index: number, warmup: boolean, scheduledAt: number | null) => {
    // A replayed trace's measured requests start again from its first record, whatever the warmup took.
    const item = plan.hasReplay && !warmup ? plan.item(index - options.warmup) : plan.item(index);
    if (item.conversation) await converse({ sendOne, halt: halt.signal, thinkRandom }, index, item, item.conversation, warmup, scheduledAt);
    else if (item.replay)
      await sendOne(item, replayRequest(item, item.replay, options.tokenRange ?? tokenRangeFor(null)), warmup, scheduledAt, null);
    else await sendOne(item, requestFor(item), warmup, scheduledAt, null);
  };

  let outcome: LoadOutcome;
  try {
    outcome = await generateLoad({
      load: options.load,
      stop: options.stop,
      warmup: options.warmup,
      send,
      halt: halt.signal,
      seed: options.seed,
      onMeasuredStart: options.onMeasuredStart,
    });
  } finally {
    options.signal?.removeEventListener('abort', onCancel);
    agent.destroy();
    writer.flush();
  }
  if (!writer.failure) {
    // A cancelled run, or a server that was lost or stopped answering, is not asked to tokenize: that would wait out its timeouts.
    const serverGone = options.signal?.aborted || abortReason !== null || unresponsive !== null;
    await recordAfterLoad(options, { reasoningTexts, promptHashes, promptsToHash, serverGone: Boolean(serverGone) });
  }
  const ended = await howTheRunEnded({
    storageFailure: writer.failure,
    cancelled: options.signal?.aborted ?? false,
    abortReason: () => abortReason,
    unresponsive,
    serverLost: options.serverLost,
  });
  return { ...ended, outcome, stored: writer.written };
}

/**
 * The run's status and reason, by precedence: storage failed, the user cancelled, the server was
 * lost (or stopped answering), or it completed.
 */
async function howTheRunEnded(facts: {
  storageFailure: Error | null;
  cancelled: boolean;
  /** Read again after the grace period: a crash report may arrive during it. */
  abortReason: () => string | null;
  unresponsive: string | null;
  serverLost: Promise<string> | undefined;
}): Promise<Pick<RunExecution, 'status' | 'reason'>> {
  if (facts.storageFailure) return { status: 'failed', reason: facts.abortReason() ?? facts.storageFailure.message };
  if (facts.cancelled) return { status: 'interrupted', reason: 'cancelled by the user' };
  // A crash reported by the server manager explains refusals better than counting them does. Refused
  // connections can add up before the manager has seen the process exit, so its report is given a moment.
  if (facts.unresponsive !== null && facts.abortReason() === null && facts.serverLost)
    await Promise.race([facts.serverLost, new Promise((resolve) => setTimeout(resolve, SERVER_LOSS_GRACE_MS).unref())]);
  const reason = facts.abortReason() ?? facts.unresponsive;
  return reason ? { status: 'aborted', reason } : { status: 'completed', reason: null };
}

type SendOne = (
  item: ResolvedItem,
  request: { path: string; body: Record<string, unknown> },
  warmup: boolean,
  scheduledAt: number | null,
  place: { session: number; turn: number } | null,
) => Promise<StreamedCompletion>;

/**
 * One user's conversation: each turn sends the history so far plus its message, then the
 * user thinks before the next. A failed turn ends the conversation: the next turn has no
 * answer to follow. Later turns are scheduled at the previous answer's end plus the think
 * time, so a late timer shows as slip.
 */
async function converse(
  run: { sendOne: SendOne; halt: AbortSignal; thinkRandom: () => number },
  session: number,
  item: ResolvedItem,
  conversation: ResolvedConversation,
  warmup: boolean,
  scheduledAt: number | null,
): Promise<void> {
  const history: ChatMessage[] = conversation.system ? [{ role: 'system', content: conversation.system }] : [];
  let due = scheduledAt;
  for (const [index, turn] of conversation.turns.entries()) {
    if (run.halt.aborted) return;
    const messages: ChatMessage[] = [...history, { role: 'user', content: turn.user }];
    const completion = await run.sendOne(item, requestFor({ ...item, messages, prompt: null }), warmup, due, { session, turn: index + 1 });
    if (completion.error) return;
    const answer = conversation.history === 'reference' && turn.reference !== null ? turn.reference : completion.text;
    history.push({ role: 'user', content: turn.user }, { role: 'assistant', content: answer });
    if (index === conversation.turns.length - 1) return;
    const thinkMs = drawThinkTime(conversation.think_time, run.thinkRandom);
    const answeredAt = completion.endAt ?? performance.now();
    await pauseUntil(answeredAt + thinkMs, run.halt);
    due = scheduledAt === null ? null : answeredAt + thinkMs;
  }
}

/**
 * What is counted once the load is over, so that tokenize calls do not compete with measured
 * requests: reasoning length in the server's tokens, and the block hashes of text and chat prompts.
 */
async function recordAfterLoad(
  options: Pick<Parameters<typeof executeRun>[0], 'store' | 'runId' | 'signal' | 'reasoningTokenCounter' | 'hashServer'>,
  pending: {
    reasoningTexts: Map<number, string>;
    promptHashes: Map<number, string[]>;
    promptsToHash: Map<number, SentPrompt>;
    serverGone: boolean;
  },
): Promise<void> {
  if (pending.reasoningTexts.size > 0) {
    await countReasoningTokens(
      options.store,
      options.runId,
      pending.reasoningTexts,
      options.reasoningTokenCounter ?? null,
      options.signal?.aborted ? 'the run was cancelled before reasoning was counted' : null,
    );
  }
  if (pending.promptHashes.size === 0 && pending.promptsToHash.size === 0) return;
  const tokenized = await hashSentPrompts(pending.promptsToHash, pending.serverGone ? null : (options.hashServer ?? null));
  try {
    options.store.setBlockHashes(options.runId, [...[...pending.promptHashes].map(([seq, hashes]) => ({ seq, hashes })), ...tokenized]);
  } catch {
    // The requests themselves are stored; a missing hash list reads as "not recorded" in a trace export.
  }
}

/**
 * Reasoning length in the server's own tokens: llama.cpp counts reasoning inside
 * completion_tokens and reports no separate count. Done after the load so the tokenize calls
 * do not compete with measured requests. The first failure (a lost server) leaves the rest
 * uncounted with the same reason instead of waiting out a timeout per request.
 */
async function countReasoningTokens(
  store: RunStore,
  runId: string,
  texts: Map<number, string>,
  counter: TokenCounter | null,
  skipReason: string | null,
): Promise<void> {
  let failure = skipReason ?? (counter === null || !counter.exact ? 'no server tokenizer (/tokenize) for this target' : null);
  const counts: { seq: number; tokens: number | null; note: string | null }[] = [];
  for (const [seq, text] of texts) {
    if (failure === null) {
      try {
        counts.push({ seq, tokens: await counter!.count(text), note: null });
        continue;
      } catch (error) {
        failure = `tokenizing failed: ${(error as Error).message}`;
      }
    }
    counts.push({ seq, tokens: null, note: failure });
  }
  try {
    store.setReasoningTokens(runId, counts);
  } catch {
    // The requests themselves are stored; a missing count reads as uncounted in the summary.
  }
}

/** The reference run's answer to compare with: per item, and per turn in a conversation. */
function referenceKey(item: ResolvedItem, place: { turn: number } | null): string {
  return place ? `${item.id}#${place.turn}` : item.id;
}
