import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { answerCheckFor, embeddingsAnswerProblem, postForAnswer, rerankAnswerProblem } from '../../src/main/client/json-answer-client';
import { deriveRequestMetrics } from '../../src/main/metrics/request-metrics';
import { embeddingsSummary } from '../../src/main/metrics/embeddings-summary';
import type { MeasuredRequest } from '../../src/shared/contract/measurement';

/**
 * Answers shaped like llama-server's /v1/embeddings, written by a real local HTTP server and
 * read by the real client. The 200 answer's shape and the 400 and 501 error bodies are the ones
 * the pinned llama-server gave for the demo model (captured on this machine with curl: without
 * --pooling, and /v1/rerank without --reranking); the broken answers are constructed.
 */
type Answer = { status?: number; body: string; delayMs?: number; chunkDelayMs?: number };

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

async function answering(answer: Answer | null): Promise<{ baseUrl: string; received: unknown[] }> {
  const received: unknown[] = [];
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (piece: Buffer) => (body += piece.toString()));
    request.on('end', () => {
      received.push({ url: request.url, headers: request.headers, body: JSON.parse(body) });
      // null: a server that never answers.
      if (answer === null) return;
      setTimeout(() => {
        response.writeHead(answer.status ?? 200, { 'content-type': 'application/json' });
        if (answer.chunkDelayMs === undefined) return void response.end(answer.body);
        // The answer in two pieces, apart in time: the client times its end, not its headers.
        const half = Math.floor(answer.body.length / 2);
        response.write(answer.body.slice(0, half));
        setTimeout(() => response.end(answer.body.slice(half)), answer.chunkDelayMs);
      }, answer.delayMs ?? 0);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { baseUrl: `http://127.0.0.1:${(server.address() as { port: number }).port}`, received };
}

const vectors = (count: number, dimensions = 4) =>
  Array.from({ length: count }, (_, index) => ({
    object: 'embedding',
    index,
    embedding: Array.from({ length: dimensions }, (_, d) => (index + 1) * 0.01 - d * 0.003),
  }));
const answerOf = (data: unknown, usage: unknown = { prompt_tokens: 7, total_tokens: 7 }) =>
  JSON.stringify({ model: '/models/demo-q8_0.gguf', object: 'list', usage, data });

async function post(
  answer: Answer | null,
  inputs = ['hello world', 'second input here'],
  extra: Partial<Parameters<typeof postForAnswer>[0]> = {},
) {
  const { baseUrl, received } = await answering(answer);
  const body = { input: inputs };
  const completion = await postForAnswer(
    { baseUrl, path: '/v1/embeddings', body, totalTimeoutMs: 5000, ...extra },
    answerCheckFor('/v1/embeddings', body)!,
  );
  return { completion, received };
}

describe('the JSON-answer client on /v1/embeddings against a real HTTP server', () => {
  it('times the whole answer, reads the input tokens from usage, and yields latency without TTFT or output tokens', async () => {
    const { completion, received } = await post({ body: answerOf(vectors(2)), delayMs: 20, chunkDelayMs: 40 });
    expect(received).toEqual([expect.objectContaining({ url: '/v1/embeddings', body: { input: ['hello world', 'second input here'] } })]);
    // Not a stream: nothing asks for one.
    expect((received[0] as { body: Record<string, unknown> }).body.stream).toBeUndefined();
    expect(completion.error).toBeNull();
    expect(completion.httpStatus).toBe(200);
    expect(completion.usage).toEqual({ prompt_tokens: 7, completion_tokens: 0, cached_tokens: null });
    expect(completion.endAt! - completion.headersAt!).toBeGreaterThanOrEqual(35);
    const metrics = deriveRequestMetrics(completion);
    expect(metrics.ttft_ms).toBeNull();
    expect(metrics.tpot_ms).toBeNull();
    expect(metrics.output_tokens).toBe(0);
    expect(metrics.e2e_ms).toBeGreaterThanOrEqual(55);
  });

  it("keeps an endpoint's own path prefix", async () => {
    const { baseUrl, received } = await answering({ body: answerOf(vectors(1)) });
    const body = { input: ['a'] };
    const completion = await postForAnswer(
      { baseUrl: `${baseUrl}/gateway/`, path: '/v1/embeddings', body },
      answerCheckFor('/v1/embeddings', body)!,
    );
    expect(completion.error).toBeNull();
    expect(received).toEqual([expect.objectContaining({ url: '/gateway/v1/embeddings' })]);
  });

  it('counts a request without usage as a success whose input tokens are unknown', async () => {
    const { completion } = await post({ body: answerOf(vectors(2), null) });
    expect(completion.error).toBeNull();
    expect(completion.usage).toBeNull();
  });

  it.each([
    ['one vector for two inputs', answerOf(vectors(1)), /the answer holds 1 embeddings for 2 inputs/],
    [
      'vectors of two lengths',
      answerOf([vectors(1, 4)[0], { index: 1, embedding: [0.1, 0.2] }]),
      /data\[1\] has 2 dimensions where data\[0\] has 4/,
    ],
    ['an empty vector', answerOf([{ index: 0, embedding: [] }, ...vectors(1)]), /data\[0\] has no embedding/],
    [
      'a value that is not a number',
      answerOf([
        { index: 0, embedding: [0.1, 'x'] },
        { index: 1, embedding: [0.1, 0.2] },
      ]),
      /data\[0\] holds a value that is not a finite number/,
    ],
    ['no data list', JSON.stringify({ object: 'list' }), /the answer has no "data" list/],
    ['a body that is not JSON', '{"data": [', /the answer is not JSON/],
    ['a JSON array', '[]', /the answer has no "data" list/],
  ])('fails a 200 answer with %s rather than counting it as fast', async (_name, body, message) => {
    const { completion } = await post({ body });
    expect(completion.error).toEqual({ class: 'malformed_chunk', message: expect.stringMatching(message) });
    expect(deriveRequestMetrics(completion).e2e_ms).toBeNull();
  });

  it("keeps llama-server's own refusal as the request's error", async () => {
    const refusal =
      '{"error":{"code":400,"message":"Pooling type \'none\' is not OAI compatible. Please use a different pooling type","type":"invalid_request_error"}}';
    const { completion } = await post({ status: 400, body: refusal });
    expect(completion.error).toEqual({
      class: 'http_status',
      message: expect.stringMatching(/^HTTP 400: .*Pooling type 'none' is not OAI compatible/),
    });
  });

  it('refuses an answer larger than its limit instead of holding it', async () => {
    const { completion } = await post({ body: answerOf(vectors(2, 400)) }, undefined, { maxAnswerBytes: 2048 });
    expect(completion.error).toEqual({ class: 'malformed_chunk', message: expect.stringMatching(/passed .* MiB; refused/) });
  });

  it('ends a request the server never answers at its total timeout, and a cancelled one at once', async () => {
    const timedOut = await post(null, ['a'], { totalTimeoutMs: 150 });
    expect(timedOut.completion.error).toEqual({ class: 'total_timeout', message: 'not finished within 150 ms' });
    const noHeaders = await post(null, ['a'], { firstTokenTimeoutMs: 100 });
    expect(noHeaders.completion.error?.class).toBe('first_token_timeout');
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const cancelled = await post(null, ['a'], { signal: controller.signal });
    expect(cancelled.completion.error).toEqual({ class: 'cancelled', message: 'cancelled' });
  });

  it('checks the answer shape the same way without a server', () => {
    expect(embeddingsAnswerProblem({ data: vectors(3) }, 3)).toBeNull();
    expect(embeddingsAnswerProblem(null, 1)).toBe('the answer is not a JSON object');
    // Streamed requests are not this client's.
    expect(answerCheckFor('/v1/chat/completions', { messages: [] })).toBeNull();
  });
});

describe('the JSON-answer client on /v1/rerank', () => {
  // The shape llama-server's format_response_rerank writes (Jina style): results sorted by score, usage of every document's tokens.
  const ranked = (scores: number[]) =>
    JSON.stringify({
      model: 'reranker.gguf',
      object: 'list',
      usage: { prompt_tokens: 30, total_tokens: 30 },
      results: scores.map((score, index) => ({ index, relevance_score: score })).sort((a, b) => b.relevance_score - a.relevance_score),
    });

  it('times a scored answer whole and reads its tokens; a wrong one fails, naming what is wrong', async () => {
    const { baseUrl, received } = await answering({ body: ranked([0.1, 2.5, -1]) });
    const body = { query: 'q', documents: ['a', 'b', 'c'] };
    const completion = await postForAnswer(
      { baseUrl, path: '/v1/rerank', body, totalTimeoutMs: 5000 },
      answerCheckFor('/v1/rerank', body)!,
    );
    expect(received).toEqual([expect.objectContaining({ url: '/v1/rerank', body })]);
    expect(completion.error).toBeNull();
    expect(completion.usage).toEqual({ prompt_tokens: 30, completion_tokens: 0, cached_tokens: null });
    expect(rerankAnswerProblem(JSON.parse(ranked([1, 2])), 3)).toBe('the answer scores 2 documents of 3');
    expect(
      rerankAnswerProblem(
        {
          results: [
            { index: 0, relevance_score: 1 },
            { index: 0, relevance_score: 2 },
          ],
        },
        2,
      ),
    ).toBe('results[1] names no document of its own (index 0)');
    expect(rerankAnswerProblem({ results: [{ index: 5, relevance_score: 1 }] }, 1)).toBe(
      'results[0] names no document of its own (index 5)',
    );
    expect(rerankAnswerProblem({ results: [{ index: 0, score: 1 }] }, 1)).toBe('results[0] has no finite relevance_score');
    expect(rerankAnswerProblem({ data: [] }, 1)).toBe('the answer has no "results" list');
  });

  it("keeps llama-server's refusal of a server started without --reranking as the request's error", async () => {
    const { baseUrl } = await answering({
      status: 501,
      body: '{"error":{"code":501,"message":"This server does not support reranking. Start it with `--reranking`","type":"not_supported_error"}}',
    });
    const body = { query: 'q', documents: ['a'] };
    const completion = await postForAnswer({ baseUrl, path: '/v1/rerank', body }, answerCheckFor('/v1/rerank', body)!);
    expect(completion.error).toEqual({ class: 'http_status', message: expect.stringMatching(/^HTTP 501: .*does not support reranking/) });
  });
});

describe('the embeddings summary', () => {
  const row = (overrides: Partial<MeasuredRequest>): MeasuredRequest => ({
    warmup: false,
    group_name: 'g',
    scheduled_ms: null,
    t0_ms: 0,
    end_ms: 100,
    ttft_ms: null,
    tpot_ms: null,
    e2e_ms: 100,
    queue_ms: null,
    client_overhead_ms: null,
    output_tokens: 0,
    prompt_tokens: 10,
    cached_tokens: null,
    error_class: null,
    accepted: null,
    chunk_offsets_ms: null,
    ...overrides,
  });

  it('counts inputs from the stored successes of each item, over the measured window; warmup and failures count for nothing', () => {
    const rows = [
      row({ warmup: true, t0_ms: -500, end_ms: -400, prompt_tokens: 99 }),
      row({ t0_ms: 0, end_ms: 200, prompt_tokens: 40 }),
      row({ t0_ms: 100, end_ms: 400, prompt_tokens: 160 }),
      row({ t0_ms: 300, end_ms: 500, prompt_tokens: null, error_class: 'http_status' }),
    ];
    // One success of a 1-input item, one of a 4-input item (as the store counts them, warmup and failures left out).
    const summary = embeddingsSummary(
      rows,
      new Map([
        ['one', 1],
        ['four', 1],
      ]),
      new Map([
        ['one', 1],
        ['four', 4],
        ['unused', 16],
      ]),
    );
    expect(summary).toEqual({
      requests: 2,
      inputs: 5,
      inputs_per_request_mean: 2.5,
      // The window runs from the first measured send (0) to the last end (500 ms, the failure's too, as throughput's does).
      inputs_per_s: 10,
      input_tokens: 200,
      input_tokens_per_s: 400,
    });
  });

  it('says input tokens are unknown when no request reported them, and gives no rate without a window', () => {
    const summary = embeddingsSummary([row({ prompt_tokens: null })], new Map([['a', 1]]), new Map([['a', 2]]));
    expect(summary.input_tokens).toBeNull();
    expect(summary.input_tokens_per_s).toBeNull();
    expect(summary.inputs_per_s).toBe(20);
    expect(embeddingsSummary([], new Map(), new Map())).toMatchObject({
      requests: 0,
      inputs: 0,
      inputs_per_request_mean: null,
      inputs_per_s: null,
    });
  });
});
