import http from 'node:http';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Worker } from 'node:worker_threads';
import { shiftCompletionTimes, turnBatcher } from '../../src/main/runner/shard-protocol';
import { StreamShards } from '../../src/main/runner/stream-shards';
import type { LoadSpec } from '../../src/main/runner/load-generator';
import { executeRun, type RunExecution } from '../../src/main/runner/run-executor';
import { checkRunShape } from '../../src/main/services/run-spec';
import { openDatabase } from '../../src/main/store/database';
import { RunStore } from '../../src/main/store/run-store';
import type { RequestRow } from '../../src/main/store/run-rows';
import { demoRunSpec } from '../support/specs';
import { createBareRun } from '../support/stored-request';
import { handMadeCompletion } from '../support/streamed-completion';
import { useTempDirs } from '../support/temp';
import { oneGroupWorkload, resolvedItem } from '../support/workload-items';

/**
 * Stream shards (worker threads that send an open loop's requests) against a real local HTTP
 * server writing llama-server-shaped streams with real pauses (constructed, not captured). The
 * server notes, on the test's clock, when each request arrived and when its first token was
 * written: a shard whose times were not moved onto the run's clock would show a request sent
 * after the server saw it, or a first token read before it was written.
 */
const tempDir = useTempDirs();
const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** One request as the server saw it, on the test's clock; `answer` names it in the reply. */
interface Seen {
  answer: number;
  arrivedAt: number;
  firstTokenAt: number;
}

const event = (payload: unknown) => `data: ${typeof payload === 'string' ? payload : JSON.stringify(payload)}\n\n`;
const delta = (content: string, finish: string | null = null) => ({ choices: [{ index: 0, delta: { content }, finish_reason: finish }] });

/**
 * Answers each chat request in three tokens, 15 ms apart, then usage and [DONE]: its prompt, the
 * number of its answer (`alpha #4 says hi`), so a stored request finds its own arrival here.
 */
async function echoServer(seen: Seen[]): Promise<string> {
  let answers = 0;
  const server = http.createServer((request, response) => {
    const arrivedAt = performance.now();
    const answer = answers++;
    let body = '';
    request.on('data', (piece: Buffer) => (body += piece.toString()));
    request.on('end', () => {
      const content = (JSON.parse(body) as { messages: { content: string }[] }).messages[0]!.content;
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const tokens = [`${content} #${answer} `, 'says ', 'hi'];
      let index = 0;
      const next = () => {
        if (index === 0) seen[answer] = { answer, arrivedAt, firstTokenAt: performance.now() };
        if (index < tokens.length) {
          response.write(event(delta(tokens[index]!, index === tokens.length - 1 ? 'stop' : null)));
          index += 1;
          setTimeout(next, 15);
          return;
        }
        response.write(event({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 3 } }));
        response.end(event('[DONE]'));
      };
      next();
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

const items = ['alpha', 'beta', 'gamma'].map((id) => resolvedItem({ id, messages: [{ role: 'user', content: id }] }));

async function openLoopRun(
  baseUrl: string,
  shards: number,
  options: {
    requests?: number;
    warmup?: number;
    signal?: AbortSignal;
    serverLost?: Promise<string>;
    onProgress?: () => void;
    onText?: (seq: number, text: string) => void;
  } = {},
): Promise<{ execution: RunExecution; rows: RequestRow[]; runStart: number }> {
  const db = openDatabase(path.join(tempDir(), 'runs.db'));
  try {
    const store = new RunStore(db);
    const runId = createBareRun(store);
    const load: LoadSpec = { mode: 'open', rate: 60, burstiness: 1, maxOutstanding: 64, seed: 7, shards };
    const runStart = performance.now();
    const execution = await executeRun({
      store,
      runId,
      workload: oneGroupWorkload(items),
      target: { baseUrl },
      load,
      stop: { requests: options.requests ?? 30, durationMs: null },
      warmup: options.warmup ?? 2,
      timeouts: { firstTokenMs: 5000, totalMs: 10_000 },
      private: false,
      references: null,
      clockOrigin: runStart,
      signal: options.signal,
      serverLost: options.serverLost,
      onProgress: options.onProgress,
      onText: options.onText,
    });
    return { execution, rows: store.requests(runId), runStart };
  } finally {
    db.close();
  }
}

describe('stream shards', () => {
  it('moves every time in a completion, each list once', () => {
    const completion = handMadeCompletion({
      t0: 10,
      headersAt: 12,
      contentChunkTimes: [20, 30],
      answerChunkTimes: [20, 30],
      reasoningChunkTimes: [],
      toolCallChunkTimes: [25],
      toolCalls: [{ index: 0, id: 'c', name: 'f', arguments: '{}', firstAt: 25, lastAt: 25 }],
      finishAt: 30,
      endAt: 31,
    });
    const shifted = shiftCompletionTimes(completion, 100);
    expect([shifted.t0, shifted.headersAt, shifted.finishAt, shifted.endAt]).toEqual([110, 112, 130, 131]);
    expect([shifted.contentChunkTimes, shifted.answerChunkTimes, shifted.toolCallChunkTimes]).toEqual([[120, 130], [120, 130], [125]]);
    expect([shifted.toolCalls[0]!.firstAt, shifted.toolCalls[0]!.lastAt]).toEqual([125, 125]);
  });

  it('hands the messages of one turn over together, in order, and at once when flushed first', async () => {
    const delivered: number[][] = [];
    const batch = turnBatcher<number>((items) => delivered.push(items));
    batch.add(1);
    batch.add(2);
    await Promise.resolve();
    batch.add(3);
    expect(delivered).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(delivered).toEqual([[1, 2, 3]]);
    // A flush (before a halt goes out) delivers what is held now, and the turn's end then has nothing to send.
    batch.add(4);
    batch.flush();
    expect(delivered).toEqual([[1, 2, 3], [4]]);
    await new Promise((resolve) => setImmediate(resolve));
    batch.add(5);
    await new Promise((resolve) => setImmediate(resolve));
    expect(delivered).toEqual([[1, 2, 3], [4], [5]]);
  });

  it('an open loop over two shards stores every request on the run clock, as one loop stores them', async () => {
    const seen: Seen[] = [];
    const baseUrl = await echoServer(seen);
    const texts = new Map<number, string>();
    const sharded = await openLoopRun(baseUrl, 2, { onText: (seq, text) => texts.set(seq, (texts.get(seq) ?? '') + text) });
    const oneLoop = await openLoopRun(baseUrl, 1);
    expect(sharded.execution.status).toBe('completed');
    expect(sharded.rows).toHaveLength(32);
    expect(sharded.rows.map((row) => row.seq).sort((a, b) => a - b)).toEqual(Array.from({ length: 32 }, (_, seq) => seq));
    expect(sharded.rows.every((row) => row.error_class === null && row.output_text?.endsWith('says hi'))).toBe(true);
    // Read on the shards' threads, each answer reaches a live view once, whole, as its request ends.
    expect(sharded.rows.map((row) => texts.get(row.seq))).toEqual(sharded.rows.map((row) => row.output_text));

    // Each shard reports its own loop and slip, and together they sent every request, warmup included.
    const shards = sharded.execution.shards!;
    expect(shards.map((shard) => shard.shard).sort()).toEqual([0, 1]);
    expect(shards.reduce((sum, shard) => sum + shard.requests, 0)).toBe(32);
    for (const shard of shards) {
      expect(shard.requests).toBeGreaterThan(0);
      expect(shard.slip_ms_max).not.toBeNull();
    }

    // One clock: each request sent no earlier than scheduled and before the server saw it, its first token read after it was written.
    for (const row of sharded.rows) {
      const server = seen[Number(/#(\d+)/.exec(row.output_text!)![1])]!;
      const sentAt = sharded.runStart + row.t0_ms;
      const times = JSON.stringify({ row: row.seq, scheduled: row.scheduled_ms, sent: row.t0_ms, server, runStart: sharded.runStart });
      if (row.warmup === 0) expect(row.t0_ms, times).toBeGreaterThanOrEqual(row.scheduled_ms!);
      expect(server.arrivedAt, times).toBeGreaterThanOrEqual(sentAt);
      expect(sentAt + row.ttft_ms!, times).toBeGreaterThanOrEqual(server.firstTokenAt);
    }

    // The same schedule from the run's own loop: the same requests, items, warmup flags and gaps between scheduled times.
    expect(oneLoop.execution.shards).toBeNull();
    const shape = (rows: RequestRow[]) => rows.map((row) => [row.seq, row.item_id, row.warmup, row.output_text!.replace(/#\d+ /, '')]);
    expect(shape(sharded.rows)).toEqual(shape(oneLoop.rows));
    const gaps = (rows: RequestRow[]) => {
      const scheduled = rows.filter((row) => row.warmup === 0).map((row) => row.scheduled_ms!);
      return scheduled.slice(1).map((at, index) => at - scheduled[index]!);
    };
    const shardedGaps = gaps(sharded.rows);
    const oneLoopGaps = gaps(oneLoop.rows);
    expect(shardedGaps).toHaveLength(oneLoopGaps.length);
    shardedGaps.forEach((gap, index) => expect(gap).toBeCloseTo(oneLoopGaps[index]!, 6));
  });

  it('a lost server stops the shards: requests waiting for their time are not sent, and every sent one is stored', async () => {
    const baseUrl = await echoServer([]);
    let finished = 0;
    let lose: (reason: string) => void = () => {};
    const serverLost = new Promise<string>((resolve) => (lose = resolve));
    const { execution, rows } = await openLoopRun(baseUrl, 2, {
      requests: 200,
      serverLost,
      onProgress: () => {
        if (++finished === 10) lose('the server exited (code 1)');
      },
    });
    expect(execution.status).toBe('aborted');
    expect(execution.reason).toBe('the server exited (code 1)');
    expect(rows.length).toBeLessThan(202);
    expect(execution.stored).toBe(rows.length);
    // What was sent was measured to its end: a halt stops new requests, it does not cut streams.
    expect(rows.every((row) => row.error_class === null)).toBe(true);
    expect(execution.outcome.sent).toBe(rows.filter((row) => row.warmup === 0).length);
    expect(execution.shards!.reduce((sum, shard) => sum + shard.requests, 0)).toBe(rows.length);
  });

  it('a shard that exits gives back what it held as not sent, says why, and takes no more', async () => {
    const baseUrl = await echoServer([]);
    const lost: string[] = [];
    const shards = new StreamShards(2, { baseUrl, timeouts: { firstTokenMs: 5000, totalMs: 10_000 }, sockets: 8 }, (reason) =>
      lost.push(reason),
    );
    await shards.ready();
    const request = { path: '/v1/chat/completions', body: { messages: [{ role: 'user', content: 'alpha' }], max_tokens: 3 } };
    // Four requests due a second from now: two wait on each shard when the first one's thread ends.
    const held = Array.from({ length: 4 }, () => shards.stream(request, performance.now() + 1000));
    await (shards as unknown as { shards: { worker: Worker }[] }).shards[0]!.worker.terminate();
    const answers = await Promise.all([...held, shards.stream(request, null)]);
    expect(answers.filter((answer) => answer === null)).toHaveLength(2);
    expect(answers.filter((answer) => answer?.text.endsWith('says hi'))).toHaveLength(3);
    expect(lost).toEqual(['stream shard 0 exited (code 1); its 2 unanswered requests were not recorded']);
    const reports = await shards.close();
    expect(reports.map((report) => [report.shard, report.requests])).toEqual([[1, 3]]);
  });

  it('a cancel reaches the requests in flight on the shards', async () => {
    const baseUrl = await echoServer([]);
    const cancel = new AbortController();
    let finished = 0;
    const { execution, rows } = await openLoopRun(baseUrl, 2, {
      requests: 200,
      signal: cancel.signal,
      onProgress: () => {
        if (++finished === 10) cancel.abort();
      },
    });
    expect(execution.status).toBe('interrupted');
    expect(rows.length).toBeLessThan(202);
    expect(rows.filter((row) => row.error_class === 'cancelled').length).toBeGreaterThan(0);
    expect(execution.shards!.reduce((sum, shard) => sum + shard.requests, 0)).toBe(rows.length);
  });
});

describe("a run spec's shards", () => {
  const open = { ...demoRunSpec(), concurrency: null, rate: 20 };
  it('asks the open loop for its shards, and one shard for none', () => {
    expect(checkRunShape({ ...open, shards: 3 }).request.load).toMatchObject({ mode: 'open', shards: 3 });
    expect(checkRunShape({ ...open, shards: 1 }).request.load).not.toHaveProperty('shards');
  });

  it('refuses shards without a rate, a fraction, or more than 64, naming the field', () => {
    expect(() => checkRunShape({ ...demoRunSpec(), shards: 2 })).toThrow(/burstiness, maxOutstanding and shards need a rate/);
    expect(() => checkRunShape({ ...open, shards: 1.5 })).toThrow(/shards must be a positive integer, got 1.5/);
    expect(() => checkRunShape({ ...open, shards: 65 })).toThrow(/shards must be at most 64/);
  });
});
