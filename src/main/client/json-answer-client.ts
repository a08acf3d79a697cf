import http from 'node:http';
import { requestEnding } from './request-ending';
import { emptyCompletion, requestUrl, type StreamedCompletion } from './stream-client';

/**
 * An answer's size beyond which it is refused rather than held: 2,048 inputs of 4,096-dimension
 * vectors print to about 170 MB of JSON, far past any request a benchmark sends, and a server (or
 * an endpoint) that answers without end must not take the run's memory.
 */
export const MAX_JSON_ANSWER_BYTES = 64 * 2 ** 20;

export interface JsonAnswerRequestOptions {
  baseUrl: string;
  path: string;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
  agent?: http.Agent;
  /** No answer headers within this: as a stream's first token, the request failed to start in time. */
  firstTokenTimeoutMs?: number;
  totalTimeoutMs?: number;
  signal?: AbortSignal;
  maxAnswerBytes?: number;
}

/** What an OpenAI-compatible /v1/embeddings answer must hold: one vector per input, all of one length. */
export function embeddingsAnswerProblem(answer: unknown, inputs: number): string | null {
  if (typeof answer !== 'object' || answer === null) return 'the answer is not a JSON object';
  const data = (answer as { data?: unknown }).data;
  if (!Array.isArray(data)) return 'the answer has no "data" list';
  if (data.length !== inputs) return `the answer holds ${data.length} embeddings for ${inputs} inputs`;
  let dimensions: number | null = null;
  for (const [position, entry] of data.entries()) {
    const vector = (entry as { embedding?: unknown } | null)?.embedding;
    if (!Array.isArray(vector) || vector.length === 0) return `data[${position}] has no embedding`;
    if (dimensions !== null && vector.length !== dimensions)
      return `data[${position}] has ${vector.length} dimensions where data[0] has ${dimensions}`;
    dimensions = vector.length;
    if (!vector.every((value) => typeof value === 'number' && Number.isFinite(value)))
      return `data[${position}] holds a value that is not a finite number`;
  }
  return null;
}

/** What a /v1/rerank answer must hold: one finite relevance score per document, each document once. */
export function rerankAnswerProblem(answer: unknown, documents: number): string | null {
  if (typeof answer !== 'object' || answer === null) return 'the answer is not a JSON object';
  const results = (answer as { results?: unknown }).results;
  if (!Array.isArray(results)) return 'the answer has no "results" list';
  if (results.length !== documents) return `the answer scores ${results.length} documents of ${documents}`;
  const seen = new Set<number>();
  for (const [position, entry] of results.entries()) {
    const { index, relevance_score: score } = (entry ?? {}) as { index?: unknown; relevance_score?: unknown };
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= documents || seen.has(index))
      return `results[${position}] names no document of its own (index ${JSON.stringify(index)})`;
    seen.add(index);
    if (typeof score !== 'number' || !Number.isFinite(score)) return `results[${position}] has no finite relevance_score`;
  }
  return null;
}

/** Where embeddings and reranking requests go: each answer is one JSON document, not a stream. */
export const EMBEDDINGS_PATH = '/v1/embeddings';
export const RERANK_PATH = '/v1/rerank';

const count = (value: unknown) => (Array.isArray(value) ? value.length : 0);

/** How the answer to a request on `path` is checked; null for the streamed ones (chat, completions). */
export function answerCheckFor(path: string, body: Record<string, unknown>): ((answer: unknown) => string | null) | null {
  if (path === EMBEDDINGS_PATH) return (answer) => embeddingsAnswerProblem(answer, count(body.input));
  if (path === RERANK_PATH) return (answer) => rerankAnswerProblem(answer, count(body.documents));
  return null;
}

function promptTokensOf(answer: unknown): number | null {
  const value = (answer as { usage?: { prompt_tokens?: unknown } }).usage?.prompt_tokens;
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : null;
}

/**
 * One request whose answer is a single JSON document (/v1/embeddings, /v1/rerank), timed as a
 * stream is: t0 just before the body is written, headers, and the end of the answer, which is
 * where its one "chunk" arrives. `check` says what a 200 answer must hold (one finite vector per
 * input; one score per document), so a server that answers 200 with the wrong thing fails the
 * request instead of counting as fast. Usage gives the input tokens; there is no output.
 */
export function postForAnswer(options: JsonAnswerRequestOptions, check: (answer: unknown) => string | null): Promise<StreamedCompletion> {
  const url = requestUrl(options.baseUrl, options.path);
  const payload = Buffer.from(JSON.stringify(options.body));
  const limit = options.maxAnswerBytes ?? MAX_JSON_ANSWER_BYTES;
  const result = emptyCompletion();
  return new Promise((resolve) => {
    const request = http.request(url, {
      method: 'POST',
      agent: options.agent,
      headers: { ...options.headers, 'content-type': 'application/json', 'content-length': payload.length, accept: 'application/json' },
    });
    const ending = requestEnding(result, request, options, () => resolve(result));
    const { finish, fail, timers } = ending;
    request.on('error', (error) => finish({ class: result.httpStatus === null ? 'connect' : 'partial_stream', message: error.message }));
    request.on('response', (response) => {
      result.headersAt = performance.now();
      result.httpStatus = response.statusCode ?? null;
      const ok = response.statusCode !== undefined && response.statusCode >= 200 && response.statusCode <= 299;
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        if (ending.settled) return;
        size += chunk.length;
        if (!ok) {
          if (size <= 2000) chunks.push(chunk);
          return;
        }
        if (size > limit) return fail('malformed_chunk', `the answer passed ${limit / 2 ** 20} MiB; refused`);
        chunks.push(chunk);
      });
      response.on('error', (error) => finish({ class: 'partial_stream', message: error.message }));
      response.on('end', () => {
        if (ending.settled) return;
        const text = Buffer.concat(chunks).toString('utf8');
        if (!ok) return finish({ class: 'http_status', message: `HTTP ${response.statusCode}: ${text.slice(0, 2000).trim()}` });
        result.endAt = performance.now();
        let answer: unknown;
        try {
          answer = JSON.parse(text);
        } catch {
          return finish({ class: 'malformed_chunk', message: 'the answer is not JSON' });
        }
        const problem = check(answer);
        if (problem) return finish({ class: 'malformed_chunk', message: problem });
        result.finishAt = result.endAt;
        result.finishReason = 'stop';
        const promptTokens = promptTokensOf(answer);
        result.usage = promptTokens === null ? null : { prompt_tokens: promptTokens, completion_tokens: 0, cached_tokens: null };
        finish(null);
      });
    });
    if (options.firstTokenTimeoutMs)
      timers.push(
        setTimeout(() => {
          if (result.headersAt === null) fail('first_token_timeout', `no answer within ${options.firstTokenTimeoutMs} ms`);
        }, options.firstTokenTimeoutMs),
      );
    result.t0 = performance.now();
    request.end(payload);
  });
}
