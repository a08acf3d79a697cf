import { setMaxListeners } from 'node:events';
import { evaluateAcceptanceAsync } from '../workload/acceptance';
import { judgeToolCalls, withToolCallJudgement } from '../workload/tool-call-judge';
import type { ChatMessage, ResolvedConversation, ResolvedItem, ResolvedWorkload } from '../workload/workload-types';
import { seededRandom } from '../core/random';
import { AppError } from '../core/errors';
import { ErrorCode } from '../../shared/errors';
import { deriveRequestMetrics } from '../metrics/request-metrics';
import type { TokenCounter } from '../workload/token-counter';
import type { RunStore } from '../store/run-store';
import { generateLoad, type LoadOutcome, type LoadSpec, type StopRule } from './load-generator';
import { messagesAsKept, RequestPlan, replayRequest, requestFor } from './request-plan';
import { tokenRangeFor, type TokenRange } from '../workload/trace';
import type { ServerAddress } from '../core/server-address';
import { blockHashes, hashSentPrompts, type SentPrompt } from './block-hashes';
import { RunWriter } from './run-writer';
import { storedRequestFrom } from './stored-request';
import { answerCheckFor, postForAnswer } from '../client/json-answer-client';
import { createKeepAliveAgent, streamCompletion, type StreamedCompletion } from '../client/stream-client';
import { drawThinkTime, pauseUntil } from './think-time';
import type { SendOne } from './send-one';
import { runAgentExchange } from './agent-exchange';
import { ResponsivenessWatch } from './responsiveness-watch';
import { StreamShards } from './stream-shards';
import { onAbort } from '../client/abort-fanout';
import type { ShardLoad } from '../../shared/contract/runs';

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
  /** Each stream shard's load; null when the run's own loop sent every request. */
  shards: ShardLoad[] | null;
}

type ExecuteRunOptions = {
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
  /** Awaited after the warmup, before the first measured request (see GenerateLoadOptions). */
  atStartLine?: () => Promise<void>;
  /** A llama-server to tokenize text and chat prompts for their block hashes; null for an endpoint. */
  hashServer?: ServerAddress | null;
  /** Token ids a replayed trace's prompts may use (from the server's vocabulary size). */
  tokenRange?: TokenRange;
  /** On a sharded run, whose streams are read on the shards' threads: called once per request, with its whole answer, as it ends. */
  onText?: (seq: number, text: string) => void;
  /** Counts reasoning and function-call arguments in the server's tokens once the load is over; null or inexact: left uncounted, with the reason. */
  afterLoadTokenCounter?: TokenCounter | null;
};

/**
 * The run's two stops: `cancel` (the user's: in-flight requests are cancelled too) and `halt`
 * (no new requests: the server was lost, stopped answering, or storage failed), with the first
 * reason given for a halt.
 */
class RunControl {
  readonly halt = new AbortController();
  readonly cancel = new AbortController();
  abortReason: string | null = null;
  private readonly onCancel = () => {
    this.cancel.abort();
    this.halt.abort();
  };

  constructor(
    private readonly userSignal: AbortSignal | undefined,
    serverLost: Promise<string> | undefined,
  ) {
    // Every in-flight request listens on the cancel signal, and every thinking user on the halt signal; hundreds at once is expected here.
    setMaxListeners(0, this.cancel.signal);
    setMaxListeners(0, this.halt.signal);
    userSignal?.addEventListener('abort', this.onCancel, { once: true });
    if (userSignal?.aborted) this.onCancel();
    void serverLost?.then((reason) => this.abort(reason));
  }

  /** Sends nothing more, for `reason` unless an earlier one was given. */
  abort(reason: string): void {
    this.abortReason ??= reason;
    this.halt.abort();
  }

  dispose(): void {
    this.userSignal?.removeEventListener('abort', this.onCancel);
  }
}

function initialProgress(options: ExecuteRunOptions, plan: RequestPlan): RunProgress {
  return {
    sent: 0,
    finished: 0,
    failed: 0,
    warmup: options.warmup > 0,
    lastTtftMs: null,
    lastSentAtMs: null,
    // A conversation or an agent exchange is one send but several requests: the count is of sends, not requests.
    total: options.stop.requests === null || plan.sendsSeveral ? null : options.stop.requests + options.warmup,
    durationMs: options.stop.durationMs,
  };
}

/**
 * Notes a sent prompt for its block hashes (token ids at once; text and chat to be tokenized after
 * the load) and returns the text to store: a replayed prompt is token ids, stored as their JSON list.
 */
function notePrompt(
  seq: number,
  body: Record<string, unknown>,
  pending: { promptHashes: Map<number, string[]>; promptsToHash: Map<number, SentPrompt> },
): string | null {
  const sent = body.messages as unknown[] | undefined;
  const messages = sent && messagesAsKept(sent);
  const prompt = body.prompt as string | number[] | undefined;
  // Embeddings and reranking reuse no prompt cache: nothing to hash, the texts kept as the request's.
  if (Array.isArray(body.input)) return JSON.stringify(body.input);
  if (Array.isArray(body.documents)) return JSON.stringify({ query: body.query, documents: body.documents });
  if (Array.isArray(prompt)) pending.promptHashes.set(seq, blockHashes(prompt));
  else if (messages) pending.promptsToHash.set(seq, { kind: 'chat', messages });
  else if (typeof prompt === 'string') pending.promptsToHash.set(seq, { kind: 'text', text: prompt });
  return messages ? JSON.stringify(messages) : typeof prompt === 'string' ? prompt : prompt ? JSON.stringify(prompt) : null;
}

/** An open loop's stream shards, when the load asks for more than one, stopped and cancelled with the run. */
function startShards(options: ExecuteRunOptions, control: RunControl, sockets: number): StreamShards | null {
  const count = options.load.mode === 'open' ? (options.load.shards ?? 1) : 1;
  if (count <= 1) return null;
  if (options.workload.groups.some((group) => group.items.some((item) => item.embedding_inputs || item.rerank)))
    throw new AppError(
      ErrorCode.InvalidInput,
      `shards stream chat and completion requests; ${options.workload.name} sends embeddings or reranking requests, which this thread sends: leave --shards out`,
    );
  const { baseUrl, headers } = options.target;
  const shards = new StreamShards(count, { baseUrl, headers, timeouts: options.timeouts, sockets }, (reason) => control.abort(reason));
  onAbort(control.halt.signal, () => shards.halt());
  onAbort(control.cancel.signal, () => shards.cancel());
  return shards;
}

/**
 * How far ahead of its time a request is handed to a stream shard: more than this thread's loop
 * is likely to run late while it stores and summarizes what comes back.
 */
const SHARD_DISPATCH_LEAD_MS = 50;

/** How long a run stopped by refused connections waits for the server manager to report a crash. */
const SERVER_LOSS_GRACE_MS = 2000;

/**
 * Runs a resolved workload against a target and stores every request as it finishes.
 * `signal` is the user's cancel (in-flight requests are cancelled, the run is
 * `interrupted`); `serverLost` ends the run `aborted` (no new requests; in-flight ones
 * fail on their own and are kept as failures).
 */
export async function executeRun(options: ExecuteRunOptions): Promise<RunExecution> {
  const plan = new RequestPlan(options.workload);
  const runStart = options.clockOrigin ?? performance.now();
  const control = new RunControl(options.signal, options.serverLost);

  const slots = options.load.mode === 'closed' ? options.load.concurrency : options.load.maxOutstanding;
  const shards = startShards(options, control, slots);
  const run: RunState = {
    options,
    runStart,
    control,
    shards,
    agent: createKeepAliveAgent(shards ? 1 : slots + 4),
    writer: new RunWriter(options.store, options.runId, { private: options.private }),
    progress: initialProgress(options, plan),
    responsiveness: new ResponsivenessWatch(slots),
    unresponsive: null,
    reasoningTexts: new Map(),
    argumentTexts: new Map(),
    nextSeq: 0,
    promptHashes: new Map(),
    promptsToHash: new Map(),
  };
  const { agent, writer } = run;
  const sendOne: SendOne = (item, request, warmup, scheduledAt, place) => sendAndStore(run, item, request, warmup, scheduledAt, place);
  // A send of several requests (a conversation, an agent exchange) paces its own steps.
  const paced = { sendOne, halt: control.halt.signal, thinkRandom: seededRandom(options.seed ?? 1) };

  const send = async (index: number, warmup: boolean, scheduledAt: number | null): Promise<boolean> => {
    // A replayed trace's measured requests start again from its first record, whatever the warmup took.
    const item = plan.hasReplay && !warmup ? plan.item(index - options.warmup) : plan.item(index);
    if (item.conversation) return converse(paced, index, item, item.conversation, warmup, scheduledAt);
    if (item.agent) return runAgentExchange(paced, index, item, item.agent, warmup, scheduledAt);
    const request = item.replay ? replayRequest(item, item.replay, options.tokenRange ?? tokenRangeFor(null)) : requestFor(item);
    return (await sendOne(item, request, warmup, scheduledAt, null)) !== null;
  };

  let outcome: LoadOutcome;
  let shardLoads: ShardLoad[] | null = null;
  try {
    await shards?.ready();
    outcome = await generateLoad({
      load: options.load,
      stop: options.stop,
      warmup: options.warmup,
      send,
      halt: control.halt.signal,
      seed: options.seed,
      atStartLine: options.atStartLine,
      onMeasuredStart: () => {
        shards?.markWindowStart();
        options.onMeasuredStart?.();
      },
      // A shard waits for each request's time on its own loop: this one only has to hand it over before then.
      dispatchLeadMs: shards ? SHARD_DISPATCH_LEAD_MS : 0,
    });
  } finally {
    control.dispose();
    agent.destroy();
    shardLoads = (await shards?.close()) ?? null;
    writer.flush();
  }
  if (!writer.failure) {
    // A cancelled run, or a server that was lost or stopped answering, is not asked to tokenize: that would wait out its timeouts.
    const serverGone = options.signal?.aborted || control.abortReason !== null || run.unresponsive !== null;
    await recordAfterLoad(options, { ...run, serverGone: Boolean(serverGone) });
  }
  const ended = await howTheRunEnded({
    storageFailure: writer.failure,
    cancelled: options.signal?.aborted ?? false,
    abortReason: () => control.abortReason,
    unresponsive: run.unresponsive,
    serverLost: options.serverLost,
  });
  return { ...ended, outcome, stored: writer.written, shards: shardLoads };
}

/** What a run's requests share while the load runs: where they go, how they are stored, what they tell about the server. */
interface RunState {
  options: ExecuteRunOptions;
  runStart: number;
  control: RunControl;
  /** Open loop over worker threads; null: this thread sends every request. */
  shards: StreamShards | null;
  agent: ReturnType<typeof createKeepAliveAgent>;
  writer: RunWriter;
  progress: RunProgress;
  responsiveness: ResponsivenessWatch;
  /** Why the server counts as gone, once it stopped answering. */
  unresponsive: string | null;
  /** Kept in memory (private runs store no text) until the load is over and they can be counted. */
  reasoningTexts: Map<number, string>;
  /** Each function-calling answer's arguments, to count in the server's tokens once the load is over. */
  argumentTexts: Map<number, string>;
  /** Stored sequence numbers: one per request, so a conversation's turns each get their own. */
  nextSeq: number;
  /** Block hashes: token-id prompts hashed as they go; text and chat prompts kept (in memory only) to be tokenized after the load. */
  promptHashes: Map<number, string[]>;
  promptsToHash: Map<number, SentPrompt>;
}

/** Streams one request from this thread, or from a shard at its scheduled time (null: the run halted first). */
function stream(
  run: RunState,
  seq: number,
  request: { path: string; body: Record<string, unknown> },
  scheduledAt: number | null,
): Promise<StreamedCompletion | null> {
  if (run.shards) return run.shards.stream(request, scheduledAt);
  const sent = {
    baseUrl: run.options.target.baseUrl,
    headers: run.options.target.headers,
    path: request.path,
    body: request.body,
    agent: run.agent,
    firstTokenTimeoutMs: run.options.timeouts.firstTokenMs,
    totalTimeoutMs: run.options.timeouts.totalMs,
    signal: run.control.cancel.signal,
  };
  // Embeddings and reranking answer with one JSON document; everything else streams.
  const check = answerCheckFor(request.path, request.body);
  if (check) return postForAnswer(sent, check);
  return streamCompletion({ ...sent, onText: run.options.onText ? (text) => run.options.onText!(seq, text) : undefined });
}

/** Sends one request and stores it; resolves with what streamed back, or null when it was never sent. */
async function sendAndStore(
  run: RunState,
  item: ResolvedItem,
  request: Parameters<SendOne>[1],
  warmup: boolean,
  scheduledAt: number | null,
  place: Parameters<SendOne>[4],
): Promise<StreamedCompletion | null> {
  const body = run.options.extraBody ? { ...request.body, ...run.options.extraBody } : request.body;
  // Numbered when handed over, so the numbers follow the schedule; one a halt left unsent leaves a gap.
  const seq = run.nextSeq++;
  run.progress.sent += 1;
  run.progress.warmup = warmup;
  const completion = await stream(run, seq, { path: request.path, body }, scheduledAt);
  if (completion === null) {
    run.progress.sent -= 1;
    return null;
  }
  if (run.shards && completion.text) run.options.onText?.(seq, completion.text);
  const metrics = deriveRequestMetrics(completion, { scheduledAt });
  // The answer alone is judged: reasoning is the model's working, not its reply. A private
  // run's details name nothing of the answer (a failed schema's path names its keys).
  // An agent exchange's step that called functions is not its answer: its text is not judged, its calls are.
  const step = item.agent && place ? place.turn : null;
  const intermediate = step !== null && completion.toolCalls.length > 0 && step < item.agent!.max_steps;
  const textAcceptance =
    completion.error || intermediate
      ? null
      : await evaluateAcceptanceAsync(item.checks, completion.text, run.options.references?.get(referenceKey(item, place)) ?? null, {
          private: run.options.private,
        });
  // A request that offered tools is judged on its calls too: one that does not parse fails the task however fast it came.
  // Past an exchange's first step the model chose freely: only the validity of its calls is judged there.
  const judged = step !== null && step > 1 ? { ...item, tool_choice: undefined, checks: [] } : item;
  const judgement = item.tools && !completion.error ? judgeToolCalls(judged, completion.toolCalls, { private: run.options.private }) : null;
  const acceptance = judgement ? withToolCallJudgement(textAcceptance, judgement) : textAcceptance;
  if (completion.reasoningText) run.reasoningTexts.set(seq, completion.reasoningText);
  if (judgement && judgement.calls > 0) run.argumentTexts.set(seq, completion.toolCalls.map((call) => call.arguments).join('\n'));
  const promptText = notePrompt(seq, request.body, run);
  run.writer.add(
    storedRequestFrom(completion, metrics, {
      seq,
      warmup,
      group: item.group,
      itemId: place ? `${item.id}#${place.turn}` : item.id,
      promptText,
      runStart: run.runStart,
      scheduledAt,
      accepted: acceptance?.accepted ?? null,
      acceptance: acceptance ?? undefined,
      session: place?.session ?? null,
      turn: place?.turn ?? null,
      toolCalls: judgement && {
        calls: judgement.calls,
        valid: judgement.valid,
        argument_chars: judgement.argument_chars,
        text: completion.toolCalls.map((call) => ({ name: call.name, arguments: call.arguments })),
      },
    }),
  );
  run.progress.finished += 1;
  if (completion.error) run.progress.failed += 1;
  const gone = run.responsiveness.record(completion.error?.class ?? null);
  if (gone !== null && !run.control.halt.signal.aborted) {
    run.unresponsive = gone;
    run.control.halt.abort();
  }
  run.progress.lastTtftMs = metrics.ttft_ms;
  run.progress.lastSentAtMs = completion.t0 - run.runStart;
  run.options.onProgress?.(run.progress);
  // A database that stopped accepting writes ends the run: measuring on would lose results.
  if (run.writer.failure) run.control.abort(`storing requests failed: ${run.writer.failure.message}`);
  return completion;
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
): Promise<boolean> {
  const history: ChatMessage[] = conversation.system ? [{ role: 'system', content: conversation.system }] : [];
  let due = scheduledAt;
  for (const [index, turn] of conversation.turns.entries()) {
    if (run.halt.aborted) return index > 0;
    const messages: ChatMessage[] = [...history, { role: 'user', content: turn.user }];
    const completion = await run.sendOne(item, requestFor({ ...item, messages, prompt: null }), warmup, due, { session, turn: index + 1 });
    if (completion === null) return index > 0;
    if (completion.error) return true;
    const answer = conversation.history === 'reference' && turn.reference !== null ? turn.reference : completion.text;
    history.push({ role: 'user', content: turn.user }, { role: 'assistant', content: answer });
    if (index === conversation.turns.length - 1) return true;
    const thinkMs = drawThinkTime(conversation.think_time, run.thinkRandom);
    const answeredAt = completion.endAt ?? performance.now();
    await pauseUntil(answeredAt + thinkMs, run.halt);
    due = scheduledAt === null ? null : answeredAt + thinkMs;
  }
  return true;
}

/**
 * What is counted once the load is over, so that tokenize calls do not compete with measured
 * requests: reasoning and function-call arguments in the server's tokens, and the block hashes of
 * text and chat prompts.
 */
async function recordAfterLoad(
  options: Pick<Parameters<typeof executeRun>[0], 'store' | 'runId' | 'signal' | 'afterLoadTokenCounter' | 'hashServer'>,
  pending: {
    reasoningTexts: Map<number, string>;
    argumentTexts: Map<number, string>;
    promptHashes: Map<number, string[]>;
    promptsToHash: Map<number, SentPrompt>;
    serverGone: boolean;
  },
): Promise<void> {
  const lengths = [
    { texts: pending.reasoningTexts, cancelled: 'reasoning was', store: options.store.setReasoningTokens },
    { texts: pending.argumentTexts, cancelled: 'the call arguments were', store: options.store.setToolArgumentTokens },
  ];
  for (const { texts, cancelled, store } of lengths) {
    if (texts.size === 0) continue;
    const counts = await countTokensAfterLoad(
      texts,
      options.afterLoadTokenCounter ?? null,
      options.signal?.aborted ? `the run was cancelled before ${cancelled} counted` : null,
    );
    storeCounts(() => store.call(options.store, options.runId, counts));
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
 * Lengths in the server's own tokens (reasoning, function-call arguments): llama.cpp counts both
 * inside completion_tokens and reports no separate count. Done after the load so the tokenize
 * calls do not compete with measured requests. The first failure (a lost server) leaves the rest
 * uncounted with the same reason instead of waiting out a timeout per request.
 */
async function countTokensAfterLoad(
  texts: Map<number, string>,
  counter: TokenCounter | null,
  skipReason: string | null,
): Promise<{ seq: number; tokens: number | null; note: string | null }[]> {
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
  return counts;
}

function storeCounts(write: () => void): void {
  try {
    write();
  } catch {
    // The requests themselves are stored; a missing count reads as uncounted in the summary.
  }
}

/** The reference run's answer to compare with: per item, and per turn in a conversation. */
function referenceKey(item: ResolvedItem, place: { turn: number } | null): string {
  return place ? `${item.id}#${place.turn}` : item.id;
}
