import http from 'node:http';
import { StringDecoder } from 'node:string_decoder';
import { createParser } from 'eventsource-parser';
import type { RequestErrorClass, ServerTimings, Usage } from '../../shared/contract/measurement';
import { requestEnding } from './request-ending';
import { foldToolCallDeltas, type StreamedToolCall } from './tool-call-deltas';

/** One streamed completion as observed by the client; all times in ms on the monotonic clock. */
export interface StreamedCompletion {
  /** Just before the request body was written. */
  t0: number;
  headersAt: number | null;
  /** Arrival time of every chunk that carried generated text of either kind (answer or reasoning). */
  contentChunkTimes: number[];
  /** For each of those chunks, the characters of answer text it added (0 for reasoning or a call): the answer replays as it arrived. */
  contentChunkAnswerChars: number[];
  /** Arrival times of the chunks that carried answer text (`delta.content`, or `text` on /v1/completions). */
  answerChunkTimes: number[];
  /** Arrival times of the chunks that carried reasoning text (`delta.reasoning_content`). */
  reasoningChunkTimes: number[];
  /** Arrival times of the chunks that carried a piece of a function call (`delta.tool_calls`); these count as content too. */
  toolCallChunkTimes: number[];
  /** The function calls the answer made, assembled from their pieces; empty for an answer without calls. */
  toolCalls: StreamedToolCall[];
  /**
   * Arrival of the chunk that carried `finish_reason`: where generation ended. llama.cpp
   * sends usage and timings in a later chunk and then `[DONE]`; neither is generation.
   */
  finishAt: number | null;
  /** The stream closed (`[DONE]`, or the connection ended or failed). */
  endAt: number | null;
  httpStatus: number | null;
  finishReason: string | null;
  /** The answer only; reasoning is kept apart in `reasoningText`. */
  text: string;
  reasoningText: string;
  usage: Usage | null;
  timings: ServerTimings | null;
  error: { class: RequestErrorClass; message: string } | null;
}

export interface StreamRequestOptions {
  baseUrl: string;
  body: Record<string, unknown>;
  path?: string;
  /** Extra headers, e.g. an API key for an external endpoint. */
  headers?: Record<string, string>;
  agent?: http.Agent;
  firstTokenTimeoutMs?: number;
  totalTimeoutMs?: number;
  signal?: AbortSignal;
  /** Called with each piece of generated text as it arrives. */
  onText?: (text: string, kind: 'answer' | 'reasoning') => void;
}

/** Connection reuse across requests, so a run measures the server, not TCP handshakes. */
export function createKeepAliveAgent(maxSockets = 256): http.Agent {
  return new http.Agent({ keepAlive: true, maxSockets });
}

/** One streamed completion on a connection of its own, closed after: a probe or a single request, never a run. */
export async function streamOnce(options: Omit<StreamRequestOptions, 'agent'>): Promise<StreamedCompletion> {
  const agent = createKeepAliveAgent(1);
  try {
    return await streamCompletion({ ...options, agent });
  } finally {
    agent.destroy();
  }
}

interface ChatChunk {
  choices?: {
    delta?: { content?: string | null; reasoning_content?: string | null; tool_calls?: unknown };
    text?: string;
    finish_reason?: string | null;
  }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } };
  timings?: Partial<ServerTimings>;
  error?: { message?: string };
}

function parseUsage(raw: ChatChunk['usage']): Usage | null {
  if (!raw || typeof raw.completion_tokens !== 'number' || typeof raw.prompt_tokens !== 'number') return null;
  const details = raw.prompt_tokens_details;
  const cached = typeof details === 'object' && details !== null ? details.cached_tokens : undefined;
  return {
    prompt_tokens: raw.prompt_tokens,
    completion_tokens: raw.completion_tokens,
    cached_tokens: typeof cached === 'number' ? cached : null,
  };
}

function parseTimings(raw: ChatChunk['timings']): ServerTimings | null {
  if (!raw || typeof raw.prompt_ms !== 'number' || typeof raw.predicted_ms !== 'number') return null;
  return {
    prompt_n: typeof raw.prompt_n === 'number' ? raw.prompt_n : 0,
    prompt_ms: raw.prompt_ms,
    predicted_n: typeof raw.predicted_n === 'number' ? raw.predicted_n : 0,
    predicted_ms: raw.predicted_ms,
    cache_n: typeof raw.cache_n === 'number' ? raw.cache_n : null,
    draft_n: typeof raw.draft_n === 'number' ? raw.draft_n : null,
    draft_n_accepted: typeof raw.draft_n_accepted === 'number' ? raw.draft_n_accepted : null,
  };
}

/** A completion before any byte of the answer has arrived. */
export function emptyCompletion(): StreamedCompletion {
  return {
    t0: 0,
    headersAt: null,
    contentChunkTimes: [],
    contentChunkAnswerChars: [],
    answerChunkTimes: [],
    reasoningChunkTimes: [],
    toolCallChunkTimes: [],
    toolCalls: [],
    finishAt: null,
    endAt: null,
    httpStatus: null,
    finishReason: null,
    text: '',
    reasoningText: '',
    usage: null,
    timings: null,
    error: null,
  };
}

const textOrEmpty = (value: unknown): string => (typeof value === 'string' ? value : '');

/** The body of a successful streaming response, read as it arrives. */
export interface CompletionStreamReader {
  /** Bytes as they came off the socket: a chunk may end inside an event or inside a UTF-8 sequence. */
  feed(bytes: Uint8Array): void;
  /** The first event that made the stream unusable; once set, later bytes are ignored. */
  readonly failure: { class: RequestErrorClass; message: string } | null;
}

/**
 * Turns a server-sent event stream into `result`'s text, chunk arrival times, finish reason,
 * usage and timings. Endpoints are not trusted: an event that is not a JSON object, or carries
 * an error, ends the reading with a classified failure instead of throwing, and fields of the
 * wrong type are ignored. What comes out never depends on how the bytes were split.
 */
export function createCompletionStreamReader(
  result: StreamedCompletion,
  onText?: StreamRequestOptions['onText'],
  now: () => number = () => performance.now(),
): CompletionStreamReader {
  let failure: CompletionStreamReader['failure'] = null;
  const decoder = new StringDecoder('utf8');
  const onEvent = (data: string) => {
    if (failure) return;
    const arrived = now();
    if (data === '[DONE]') {
      result.endAt = arrived;
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      failure = { class: 'malformed_chunk', message: `not JSON: ${data.slice(0, 200)}` };
      return;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      failure = { class: 'malformed_chunk', message: `not a JSON object: ${data.slice(0, 200)}` };
      return;
    }
    const chunk = parsed as ChatChunk;
    if (chunk.error) {
      const message = textOrEmpty((chunk.error as { message?: unknown }).message) || 'unknown';
      failure = { class: 'http_status', message: `server error in stream: ${message}` };
      return;
    }
    const choice: unknown = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
    const fields = (typeof choice === 'object' && choice !== null ? choice : {}) as NonNullable<ChatChunk['choices']>[number];
    const delta = typeof fields.delta === 'object' && fields.delta !== null ? fields.delta : {};
    const answer = typeof delta.content === 'string' ? delta.content : textOrEmpty(fields.text);
    const reasoning = textOrEmpty(delta.reasoning_content);
    const calling = foldToolCallDeltas(result.toolCalls, delta.tool_calls, arrived);
    if (answer || reasoning || calling) {
      result.contentChunkTimes.push(arrived);
      result.contentChunkAnswerChars.push(answer.length);
    }
    if (calling) result.toolCallChunkTimes.push(arrived);
    if (reasoning) {
      result.reasoningChunkTimes.push(arrived);
      result.reasoningText += reasoning;
      onText?.(reasoning, 'reasoning');
    }
    if (answer) {
      result.answerChunkTimes.push(arrived);
      result.text += answer;
      onText?.(answer, 'answer');
    }
    const finishReason = textOrEmpty(fields.finish_reason);
    if (finishReason) {
      result.finishReason = finishReason;
      result.finishAt ??= arrived;
    }
    const usage = typeof chunk.usage === 'object' && chunk.usage !== null ? chunk.usage : undefined;
    const timings = typeof chunk.timings === 'object' && chunk.timings !== null ? chunk.timings : undefined;
    result.usage = parseUsage(usage) ?? result.usage;
    result.timings = parseTimings(timings) ?? result.timings;
  };
  const parser = createParser({ onEvent: (event) => onEvent(event.data) });
  let started = false;
  return {
    feed: (bytes) => {
      if (failure) return;
      // A socket's chunks are Buffers already; only another Uint8Array needs a Buffer view.
      let text = decoder.write(Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
      if (!text) return;
      // The byte order mark the event-stream format allows at the very start, wherever the first chunk ended.
      if (!started) text = text.replace(/^\uFEFF/, '');
      started = true;
      if (text) parser.feed(text);
    },
    get failure() {
      return failure;
    },
  };
}

/**
 * Sends one OpenAI-style streaming request and records when every content chunk arrived.
 * Never throws: failures come back classified in `error`, with whatever was received kept.
 * A kept-alive connection that the server closed while idle fails before any byte of the
 * request is processed; that one case is retried once on a fresh connection.
 */
export async function streamCompletion(options: StreamRequestOptions): Promise<StreamedCompletion> {
  const agent = options.agent && closesAfterStreaming.has(options.agent) ? false : options.agent;
  const first = await attempt(options, agent);
  if (!first.staleSocket) return first.result;
  // llama-server closes the connection after a streamed response while advertising
  // keep-alive; once seen, every later request through this agent opens its own connection.
  if (options.agent) closesAfterStreaming.add(options.agent);
  return (await attempt(options, false)).result;
}

const closesAfterStreaming = new WeakSet<http.Agent>();

// A run sends thousands of requests to one or two URLs: parse each once.
const parsedUrls = new Map<string, URL>();
/** `path` under `baseUrl`, the base's own path kept (an endpoint behind a prefix). */
export function requestUrl(baseUrl: string, path: string): URL {
  const key = `${baseUrl}\n${path}`;
  let url = parsedUrls.get(key);
  if (!url) {
    url = new URL(path.replace(/^\//, ''), baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
    if (parsedUrls.size >= 64) parsedUrls.clear();
    parsedUrls.set(key, url);
  }
  return url;
}

function attempt(
  options: StreamRequestOptions,
  agent: http.Agent | false | undefined,
): Promise<{ result: StreamedCompletion; staleSocket: boolean }> {
  const url = requestUrl(options.baseUrl, options.path ?? '/v1/chat/completions');
  const payload = Buffer.from(JSON.stringify({ ...options.body, stream: true, stream_options: { include_usage: true } }));
  const result = emptyCompletion();

  return new Promise((resolve) => {
    let staleSocket = false;
    const request = http.request(url, {
      method: 'POST',
      agent,
      headers: { ...options.headers, 'content-type': 'application/json', 'content-length': payload.length, accept: 'text/event-stream' },
    });
    const ending = requestEnding(result, request, options, () => resolve({ result, staleSocket }));
    const { finish, fail, timers } = ending;

    request.on('error', (error: NodeJS.ErrnoException) => {
      staleSocket =
        request.reusedSocket &&
        result.httpStatus === null &&
        (error.code === 'ECONNRESET' || error.message === 'socket hang up') &&
        !options.signal?.aborted;
      finish({ class: result.httpStatus === null ? 'connect' : 'partial_stream', message: error.message });
    });
    request.on('response', (response) => {
      result.headersAt = performance.now();
      result.httpStatus = response.statusCode ?? null;
      if (!response.statusCode || response.statusCode < 200 || response.statusCode > 299) {
        response.setEncoding('utf8');
        let body = '';
        response.on('data', (chunk: string) => (body = (body + chunk).slice(0, 2000)));
        response.on('end', () => finish({ class: 'http_status', message: `HTTP ${response.statusCode}: ${body.trim()}` }));
        response.on('error', () => finish({ class: 'http_status', message: `HTTP ${response.statusCode}` }));
        return;
      }
      const reader = createCompletionStreamReader(result, options.onText);
      response.on('data', (bytes: Buffer) => {
        if (ending.settled) return;
        reader.feed(bytes);
        if (reader.failure) fail(reader.failure.class, reader.failure.message);
      });
      response.on('end', () =>
        finish(result.finishReason === null ? { class: 'partial_stream', message: 'the stream ended without a finish reason' } : null),
      );
      response.on('error', (error) => finish({ class: 'partial_stream', message: error.message }));
    });

    if (options.firstTokenTimeoutMs) {
      timers.push(
        setTimeout(() => {
          if (result.contentChunkTimes.length === 0 && result.finishReason === null)
            fail('first_token_timeout', `no token within ${options.firstTokenTimeoutMs} ms`);
        }, options.firstTokenTimeoutMs),
      );
    }
    result.t0 = performance.now();
    request.end(payload);
  });
}
