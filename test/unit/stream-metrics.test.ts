import http from 'node:http';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cameBunched } from '../../src/main/metrics/bunched-delivery';
import { deriveRequestMetrics } from '../../src/main/metrics/request-metrics';
import { executeRun } from '../../src/main/runner/run-executor';
import { streamCompletion, type StreamedCompletion } from '../../src/main/client/stream-client';
import { openDatabase } from '../../src/main/store/database';
import { RunStore } from '../../src/main/store/run-store';
import { evaluateAcceptance } from '../../src/main/workload/acceptance';
import { llamaServerTokenCounter } from '../../src/main/workload/token-counter';
import { useTempDirs } from '../support/temp';
import { summarizeCompleted } from '../support/measured-request';
import { createBareRun } from '../support/stored-request';
import { oneGroupWorkload, resolvedItem } from '../support/workload-items';
import { handMadeCompletion } from '../support/streamed-completion';
import { runAgainst } from '../support/local-run';
import { uint32View } from '../../src/main/store/request-columns';
import { chunk, DONE, finish, role, say, sseServer, think, usage, type Step } from '../support/sse-server';

const stream = async (script: Step[]) => streamCompletion({ baseUrl: await sseServer(script), body: { messages: [] } });

describe('stream client against a real HTTP stream', () => {
  it('keeps the drafted and accepted counts of a speculative request, and null (not 0) where the server drafted nothing', async () => {
    const drafted = await stream([
      { after: 0, data: role },
      { after: 5, data: say('a b c d') },
      { after: 5, data: finish() },
      {
        after: 5,
        data: usage(3, 9, { prompt_n: 3, prompt_ms: 1, predicted_n: 9, predicted_ms: 8, cache_n: 0, draft_n: 12, draft_n_accepted: 7 }),
      },
      { after: 5, data: DONE },
    ]);
    expect(drafted.timings).toMatchObject({ draft_n: 12, draft_n_accepted: 7 });
    const plain = await stream([
      { after: 0, data: role },
      { after: 5, data: say('a') },
      { after: 5, data: finish() },
      { after: 5, data: usage(3, 1, { prompt_n: 3, prompt_ms: 1, predicted_n: 1, predicted_ms: 0.01, cache_n: 0 }) },
      { after: 5, data: DONE },
    ]);
    expect(plain.timings).toMatchObject({ draft_n: null, draft_n_accepted: null });
  });

  it('ends e2e at the finish chunk, counting the unstreamed end-of-sequence step in TPOT', async () => {
    // Four content tokens, then 40 ms for the EOS token that streams nothing; usage and
    // timings follow 100 ms after the finish chunk, [DONE] 50 ms after that.
    const completion = await stream([
      { after: 0, data: role },
      { after: 30, data: say('The') },
      { after: 20, data: say(' capital') },
      { after: 20, data: say(' is') },
      { after: 20, data: say(' Paris') },
      { after: 40, data: finish() },
      { after: 100, data: usage(10, 5, { prompt_n: 10, prompt_ms: 12.5, predicted_n: 5, predicted_ms: 100, cache_n: 0 }) },
      { after: 50, data: DONE },
    ]);
    expect(completion.error).toBeNull();
    expect(completion.text).toBe('The capital is Paris');
    expect(completion.reasoningText).toBe('');
    expect(completion.contentChunkTimes).toHaveLength(4);
    expect(completion.answerChunkTimes).toEqual(completion.contentChunkTimes);
    expect(completion.usage).toEqual({ prompt_tokens: 10, completion_tokens: 5, cached_tokens: null });
    expect(completion.timings).toEqual({
      prompt_n: 10,
      prompt_ms: 12.5,
      predicted_n: 5,
      predicted_ms: 100,
      cache_n: 0,
      draft_n: null,
      draft_n_accepted: null,
    });
    const [first, , , last] = completion.contentChunkTimes as [number, number, number, number];
    const finishAt = completion.finishAt!;
    expect(finishAt - last).toBeGreaterThanOrEqual(35);
    // Usage and [DONE] came later and are not generation.
    expect(completion.endAt! - finishAt).toBeGreaterThanOrEqual(140);

    const metrics = deriveRequestMetrics(completion);
    expect(metrics.ttft_ms).toBe(first - completion.t0);
    expect(metrics.e2e_ms).toBe(finishAt - completion.t0);
    expect(metrics.tpot_ms).toBe((finishAt - first) / 4);
    // The last-content-chunk formula would have left the EOS step out: ~60/4 instead of ~100/4.
    expect(metrics.tpot_ms! - (last - first) / 4).toBeGreaterThanOrEqual(35 / 4);
    expect(metrics.output_tokens).toBe(5);
    expect(metrics.output_tokens_source).toBe('usage');
    expect(metrics.queue_ms).toBe(Math.max(0, first - completion.t0 - 12.5));
    expect(metrics.client_overhead_ms).toBe(finishAt - completion.t0 - 112.5);
    expect(metrics.decode_tokens_per_s).toBe(40);
  });

  it('tells tokens streamed as decoded from tokens a buffer held back and let go at once', async () => {
    // Both streams come from a server that reports 20 ms per decode step (predicted_ms 100 over
    // predicted_n 6). The first writes each token as it is made; the second is what a proxy
    // buffering the response (or a starved HTTP thread) delivers: everything together at the end.
    const timings = { prompt_n: 10, prompt_ms: 5, predicted_n: 6, predicted_ms: 100, cache_n: 0 };
    const words = ['One', ' two', ' three', ' four', ' five'];
    const streamed = await stream([
      { after: 0, data: role },
      ...words.map((word) => ({ after: 20, data: say(word) })),
      { after: 20, data: finish() },
      { after: 0, data: usage(10, 6, timings) },
      { after: 0, data: DONE },
    ]);
    const held = await stream([
      { after: 0, data: role },
      ...words.map((word, i) => ({ after: i === 0 ? 120 : 0, data: say(word) })),
      { after: 0, data: finish() },
      { after: 0, data: usage(10, 6, timings) },
      { after: 0, data: DONE },
    ]);
    const asMeasured = (completion: StreamedCompletion) => ({ ...deriveRequestMetrics(completion), error_class: null });
    const streamedMetrics = asMeasured(streamed);
    const heldMetrics = asMeasured(held);
    expect(streamedMetrics.decode_tokens_per_s).toBe(50);
    expect(heldMetrics.decode_tokens_per_s).toBe(50);
    expect(streamedMetrics.tpot_ms).toBeGreaterThanOrEqual(19);
    expect(heldMetrics.tpot_ms).toBeLessThan(5);
    // The held stream's TTFT swallowed the decode: 120 ms where the server had its first token after 5.
    expect(heldMetrics.ttft_ms).toBeGreaterThanOrEqual(119);
    expect(cameBunched(streamedMetrics)).toBe(false);
    expect(cameBunched(heldMetrics)).toBe(true);
  });

  it('gives "Paris" + EOS one decode step of TPOT, and a single token none', async () => {
    // llama.cpp: "Paris" is one token, the EOS a second one counted in completion_tokens.
    const twoTokens = await stream([
      { after: 0, data: role },
      { after: 20, data: say('Paris') },
      { after: 30, data: finish() },
      { after: 0, data: usage(8, 2) },
      { after: 0, data: DONE },
    ]);
    const metrics = deriveRequestMetrics(twoTokens);
    expect(metrics.output_tokens).toBe(2);
    expect(metrics.tpot_ms).toBe(twoTokens.finishAt! - twoTokens.contentChunkTimes[0]!);
    expect(metrics.tpot_ms).toBe(metrics.e2e_ms! - metrics.ttft_ms!);
    expect(metrics.tpot_ms).toBeGreaterThanOrEqual(25);

    // max_tokens 1: the only token arrives with the final batch, finish "length".
    const oneToken = await stream([
      { after: 0, data: role },
      { after: 20, data: say('Paris') },
      { after: 0, data: finish('length') },
      { after: 0, data: usage(8, 1) },
      { after: 0, data: DONE },
    ]);
    const single = deriveRequestMetrics(oneToken);
    expect(oneToken.finishReason).toBe('length');
    expect(single.output_tokens).toBe(1);
    expect(single.tpot_ms).toBeNull();
    expect(single.ttft_ms).not.toBeNull();
    expect(single.e2e_ms).not.toBeNull();
  });

  it('keeps reasoning apart from the answer, times both, and judges the answer alone', async () => {
    const completion = await stream([
      { after: 0, data: role },
      { after: 20, data: think('France has its capital') },
      { after: 20, data: think(' in Paris.') },
      { after: 40, data: say('Paris') },
      { after: 20, data: say('.') },
      { after: 20, data: finish() },
      { after: 0, data: usage(12, 9) },
      { after: 0, data: DONE },
    ]);
    expect(completion.text).toBe('Paris.');
    expect(completion.reasoningText).toBe('France has its capital in Paris.');
    expect(completion.reasoningChunkTimes).toHaveLength(2);
    expect(completion.answerChunkTimes).toHaveLength(2);
    expect(completion.contentChunkTimes).toEqual([...completion.reasoningChunkTimes, ...completion.answerChunkTimes]);
    const metrics = deriveRequestMetrics(completion);
    expect(metrics.ttfr_ms).toBe(completion.reasoningChunkTimes[0]! - completion.t0);
    expect(metrics.ttfa_ms).toBe(completion.answerChunkTimes[0]! - completion.t0);
    // TTFT is the first token of either kind (reasoning tokens are output tokens).
    expect(metrics.ttft_ms).toBe(metrics.ttfr_ms);
    expect(metrics.ttfa_ms! - metrics.ttfr_ms!).toBeGreaterThanOrEqual(55);
    expect(metrics.itl_ms).toHaveLength(3);
    // 9 completion tokens include the reasoning ones: 8 steps from the first reasoning chunk.
    expect(metrics.tpot_ms).toBe((completion.finishAt! - completion.contentChunkTimes[0]!) / 8);
    // "France" is only in the reasoning: the answer does not contain it.
    expect(evaluateAcceptance([{ contains: 'France' }], completion.text, null).accepted).toBe(false);
    expect(evaluateAcceptance([{ contains: 'Paris' }], completion.text, null).accepted).toBe(true);
  });

  it('falls back to a labelled client count when usage is missing', async () => {
    const completion = await stream([
      { after: 0, data: say('a') },
      { after: 20, data: say('b') },
      { after: 20, data: say('c') },
      { after: 20, data: finish() },
      { after: 0, data: DONE },
    ]);
    expect(completion.usage).toBeNull();
    const metrics = deriveRequestMetrics(completion);
    expect(metrics.output_tokens).toBe(3);
    expect(metrics.output_tokens_source).toBe('client_chunks');
    expect(metrics.tpot_ms).toBe((completion.finishAt! - completion.contentChunkTimes[0]!) / 2);
    expect(metrics.queue_ms).toBeNull();
    expect(metrics.decode_tokens_per_s).toBeNull();
  });

  it('takes the finish time from a content chunk that carries finish_reason (vLLM style)', async () => {
    const completion = await stream([
      { after: 0, data: say('Hello') },
      { after: 20, data: chunk({ content: '!' }, 'stop') },
      { after: 60, data: usage(4, 2) },
      { after: 0, data: DONE },
    ]);
    expect(completion.finishAt).toBe(completion.contentChunkTimes[1]);
    expect(deriveRequestMetrics(completion).e2e_ms).toBe(completion.contentChunkTimes[1]! - completion.t0);
  });

  it('fails a stream that ends without a finish chunk and gives it no e2e', async () => {
    const completion = await stream([{ after: 0, data: say('cut') }]);
    expect(completion.error?.class).toBe('partial_stream');
    expect(completion.finishAt).toBeNull();
    expect(deriveRequestMetrics(completion).e2e_ms).toBeNull();
    expect(deriveRequestMetrics(completion).tpot_ms).toBeNull();
  });
});

const handMade = handMadeCompletion;

describe('open-loop latency from the schedule', () => {
  it('measures TTFT and e2e from the scheduled time as well as from the send', () => {
    // Scheduled at 900, sent 100 ms late at 1000 (the generator waited at its bound).
    const metrics = deriveRequestMetrics(
      handMade({
        contentChunkTimes: [1020, 1030],
        answerChunkTimes: [1020, 1030],
        finishAt: 1040,
        endAt: 1041,
        usage: { prompt_tokens: 1, completion_tokens: 3, cached_tokens: null },
      }),
      { scheduledAt: 900 },
    );
    expect(metrics.ttft_ms).toBe(20);
    expect(metrics.e2e_ms).toBe(40);
    expect(metrics.ttft_from_schedule_ms).toBe(120);
    expect(metrics.e2e_from_schedule_ms).toBe(140);
    expect(deriveRequestMetrics(handMade({ contentChunkTimes: [1020], finishAt: 1040 })).ttft_from_schedule_ms).toBeNull();
  });
});

describe('run executor with reasoning', () => {
  const tempDir = useTempDirs();

  it('stores answer and reasoning apart, counts reasoning with the server tokenizer after the load, and summarizes both', async () => {
    const baseUrl = await sseServer(() => [
      { after: 0, data: role },
      { after: 10, data: think('step one') },
      { after: 10, data: think(' step two three') },
      { after: 10, data: say('Paris') },
      { after: 10, data: finish() },
      { after: 0, data: usage(5, 7) },
      { after: 0, data: DONE },
    ]);
    const workload = oneGroupWorkload([
      resolvedItem({
        id: 'capital',
        group: 'facts',
        messages: [{ role: 'user', content: 'Capital of France?' }],
        checks: [{ contains: 'step' }],
      }),
    ]);
    const db = openDatabase(path.join(tempDir(), 'runs.db'));
    try {
      const store = new RunStore(db);
      const { runId, execution } = await runAgainst(store, workload, baseUrl, {
        load: { mode: 'closed', concurrency: 2 },
        stop: { requests: 4, durationMs: null },
        afterLoadTokenCounter: llamaServerTokenCounter({ baseUrl, headers: {} }),
      });
      expect(execution.status).toBe('completed');
      const rows = store.requests(runId);
      expect(rows).toHaveLength(4);
      for (const row of rows) {
        expect(row.output_text).toBe('Paris');
        expect(row.reasoning_text).toBe('step one step two three');
        expect(row.reasoning_tokens).toBe(5);
        // "step" is only in the reasoning: the answer fails the check.
        expect(row.accepted).toBe(0);
        expect(store.chunkOffsets(runId, row.seq)).toHaveLength(3);
        // Each chunk's share of the answer, so it replays as it came: the two reasoning chunks added none.
        expect(Array.from(uint32View(row.chunk_answer_chars!))).toEqual([0, 0, 5]);
        expect(row.ttft_ms).toBe(row.ttfr_ms);
        expect(row.ttfa_ms! - row.ttfr_ms!).toBeGreaterThanOrEqual(15);
      }
      const summary = summarizeCompleted(store.measuredRequests(runId), {
        runId,
        load: { mode: 'closed', concurrency: 2 },
        serverSlots: 1,
      });
      expect(summary.reasoning).toMatchObject({
        requests_with_reasoning: 4,
        tokens: { n: 4, mean: 5 },
        tokens_uncounted: 0,
        tokens_uncounted_reason: null,
      });
      expect(summary.reasoning!.ttfr_ms.n).toBe(4);
      expect(summary.measurement.slot_wait_note).toBe(
        'concurrency 2 against 1 server slot: requests waited for a free slot, and that wait is in client_overhead_ms (and in ttft_ms and e2e_ms)',
      );

      // Without a tokenizer the count is null, with the reason.
      const uncountedRun = createBareRun(store);
      await executeRun({
        store,
        runId: uncountedRun,
        workload,
        target: { baseUrl },
        load: { mode: 'closed', concurrency: 1 },
        stop: { requests: 2, durationMs: null },
        warmup: 0,
        timeouts: { firstTokenMs: 5000, totalMs: 10_000 },
        private: true,
        references: null,
        afterLoadTokenCounter: null,
      });
      const uncounted = store.requests(uncountedRun);
      expect(uncounted.map((row) => [row.reasoning_tokens, row.reasoning_tokens_note, row.reasoning_text, row.reasoning_chars])).toEqual([
        [null, 'no server tokenizer (/tokenize) for this target', null, 23],
        [null, 'no server tokenizer (/tokenize) for this target', null, 23],
      ]);
      const uncountedSummary = summarizeCompleted(store.measuredRequests(uncountedRun), { runId: uncountedRun, serverSlots: 1 });
      expect(uncountedSummary.reasoning).toMatchObject({
        requests_with_reasoning: 2,
        tokens: { n: 0, mean: null },
        tokens_uncounted: 2,
        tokens_uncounted_reason: 'no server tokenizer (/tokenize) for this target',
      });
      expect(uncountedSummary.measurement.slot_wait_note).toBeNull();
    } finally {
      db.close();
    }
  });

  it('names the crash, not the refusals, when the server manager reports the loss after the refusals added up', async () => {
    // Nothing listens on this port: every request is refused at once, long before the crash report below arrives.
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve));
    const workload = oneGroupWorkload([
      resolvedItem({ id: 'q', messages: [{ role: 'user', content: 'hi' }], sampling: { max_tokens: 4 } }),
    ]);
    const db = openDatabase(path.join(tempDir(), 'runs.db'));
    try {
      const store = new RunStore(db);
      const run = (serverLost?: Promise<string>) =>
        executeRun({
          store,
          runId: createBareRun(store),
          workload,
          target: { baseUrl: `http://127.0.0.1:${port}` },
          load: { mode: 'closed', concurrency: 1 },
          stop: { requests: 100, durationMs: null },
          warmup: 0,
          timeouts: { firstTokenMs: 5000, totalMs: 10_000 },
          private: false,
          references: null,
          serverLost,
        });
      const late = new Promise<string>((resolve) => setTimeout(() => resolve('the server crashed: exited with signal SIGKILL'), 300));
      expect(await run(late)).toMatchObject({ status: 'aborted', reason: 'the server crashed: exited with signal SIGKILL' });
      // With no crash to report, the refusals are the reason.
      expect(await run()).toMatchObject({
        status: 'aborted',
        reason: expect.stringMatching(/^the server stopped responding: \d+ requests in a row failed \(connect\)$/),
      });
    } finally {
      db.close();
    }
  });
});
