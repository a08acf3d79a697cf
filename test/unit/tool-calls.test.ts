import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCompletionStreamReader, emptyCompletion } from '../../src/main/client/stream-client';
import type { StreamedToolCall } from '../../src/main/client/tool-call-deltas';
import { deriveRequestMetrics } from '../../src/main/metrics/request-metrics';
import { openDatabase } from '../../src/main/store/database';
import { RunStore } from '../../src/main/store/run-store';
import { judgeToolCalls, withToolCallJudgement } from '../../src/main/workload/tool-call-judge';
import { llamaServerTokenCounter } from '../../src/main/workload/token-counter';
import type { ToolDef } from '../../src/main/workload/workload-types';
import { toolCallsLine } from '../../src/shared/tool-calls-line';
import { summarizeCompleted } from '../support/measured-request';
import { chunk, DONE, finish, role, say, sseServer, usage } from '../support/sse-server';
import { runAgainst } from '../support/local-run';
import { useTempDirs } from '../support/temp';
import { oneGroupWorkload, resolvedItem } from '../support/workload-items';

const tempDir = useTempDirs();

/** Reads the events in order on a clock that ticks once per event: event k arrives at k. */
function readEvents(events: unknown[]) {
  const result = emptyCompletion();
  let tick = 0;
  const reader = createCompletionStreamReader(result, undefined, () => ++tick);
  reader.feed(Buffer.from(events.map((event) => `data: ${typeof event === 'string' ? event : JSON.stringify(event)}\n\n`).join('')));
  return { result, failure: reader.failure };
}

const calls = (...pieces: Record<string, unknown>[]) => chunk({ tool_calls: pieces });
const named = (result: { toolCalls: StreamedToolCall[] }) =>
  result.toolCalls.map(({ index, id, name, arguments: args }) => ({ index, id, name, args }));

const WEATHER: ToolDef = {
  type: 'function',
  function: {
    name: 'get_weather',
    parameters: { type: 'object', required: ['city'], properties: { city: { type: 'string' }, unit: { enum: ['c', 'f'] } } },
  },
};
const call = (name: string, args: string): StreamedToolCall => ({ index: 0, id: 'c0', name, arguments: args, firstAt: 1, lastAt: 2 });

describe('function calls in a stream, as each server sends them', () => {
  // Constructed in the shape the pinned llama-server writes (tools/server/server-chat.cpp of the pinned build: the index
  // always, id and type with the name on the call's first delta, the arguments in pieces after it).
  it('llama.cpp: the name and id once, the arguments in pieces, finish_reason "tool_calls"', () => {
    const { result, failure } = readEvents([
      role,
      calls({ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather' } }),
      calls({ index: 0, function: { arguments: '{"city": "Li' } }),
      calls({ index: 0, function: { arguments: 'sbon"}' } }),
      finish('tool_calls'),
      usage(20, 14),
      DONE,
    ]);
    expect(failure).toBeNull();
    expect(named(result)).toEqual([{ index: 0, id: 'call_1', name: 'get_weather', args: '{"city": "Lisbon"}' }]);
    expect(result.toolCallChunkTimes).toEqual([2, 3, 4]);
    // A call is generated output: TTFT counts from its first chunk where no text came before it.
    expect(result.contentChunkTimes).toEqual([2, 3, 4]);
    expect(result.text).toBe('');
    expect(result.finishReason).toBe('tool_calls');
    expect([result.toolCalls[0]!.firstAt, result.toolCalls[0]!.lastAt]).toEqual([2, 4]);
  });

  it('OpenAI: an empty argument text with the name, then the pieces', () => {
    const { result } = readEvents([
      chunk({
        role: 'assistant',
        content: null,
        tool_calls: [{ index: 0, id: 'call_q', type: 'function', function: { name: 'get_weather', arguments: '' } }],
      }),
      calls({ index: 0, function: { arguments: '{"' } }),
      calls({ index: 0, function: { arguments: 'city":"Paris"}' } }),
      finish('tool_calls'),
    ]);
    expect(named(result)).toEqual([{ index: 0, id: 'call_q', name: 'get_weather', args: '{"city":"Paris"}' }]);
  });

  it('SGLang: an empty name and the same id repeated on every piece', () => {
    const { result } = readEvents([
      calls({ index: 0, id: '0', function: { name: 'get_weather', arguments: '' } }),
      calls({ index: 0, id: '0', function: { name: '', arguments: '{"city": ' } }),
      calls({ index: 0, id: '0', function: { name: '', arguments: '"Oslo"}' } }),
      finish('tool_calls'),
    ]);
    expect(named(result)).toEqual([{ index: 0, id: '0', name: 'get_weather', args: '{"city": "Oslo"}' }]);
  });

  it('a gateway that gives every piece a new id keeps one call per index, and a repeated name is not appended', () => {
    const { result } = readEvents([
      calls({ index: 0, id: 'a', function: { name: 'get_weather', arguments: '' } }),
      calls({ index: 0, id: 'b', function: { name: 'get_weather', arguments: '{"city": "' } }),
      calls({ index: 0, id: 'c', function: { arguments: 'Rome"}' } }),
      chunk({}, 'stop'),
    ]);
    expect(named(result)).toEqual([{ index: 0, id: 'a', name: 'get_weather', args: '{"city": "Rome"}' }]);
  });

  it('Ollama: the whole call in one piece, ending with finish_reason "stop"', () => {
    const { result } = readEvents([
      calls({ index: 0, id: 'x', function: { name: 'get_weather', arguments: '{"city":"Kyiv"}' } }),
      finish(),
    ]);
    expect(named(result)).toEqual([{ index: 0, id: 'x', name: 'get_weather', args: '{"city":"Kyiv"}' }]);
    expect(result.toolCallChunkTimes).toEqual([1]);
  });

  it('parallel calls interleaved by index, text before them, and pieces without an index', () => {
    const { result } = readEvents([
      say('Checking both.'),
      calls({ index: 0, id: 'p', function: { name: 'get_weather', arguments: '{"city":' } }),
      calls({ index: 1, id: 'q', function: { name: 'get_weather', arguments: '{"city":' } }),
      calls({ index: 1, function: { arguments: '"Quito"}' } }),
      calls({ index: 0, function: { arguments: '"Lima"}' } }),
      finish('tool_calls'),
    ]);
    expect(named(result)).toEqual([
      { index: 0, id: 'p', name: 'get_weather', args: '{"city":"Lima"}' },
      { index: 1, id: 'q', name: 'get_weather', args: '{"city":"Quito"}' },
    ]);
    expect(result.text).toBe('Checking both.');
    expect(result.answerChunkTimes).toEqual([1]);
    expect(result.toolCallChunkTimes).toEqual([2, 3, 4, 5]);
    // No index: a piece goes to the call with its id, or to the last call where it has none.
    const unindexed = readEvents([
      calls({ id: 'u', function: { name: 'f', arguments: '{"a":' } }),
      calls({ function: { arguments: '1}' } }),
      calls({ id: 'v', function: { name: 'g', arguments: '{}' } }),
    ]).result;
    expect(named(unindexed)).toEqual([
      { index: 0, id: 'u', name: 'f', args: '{"a":1}' },
      { index: 1, id: 'v', name: 'g', args: '{}' },
    ]);
  });

  it('ignores pieces of the wrong shape without failing the stream, and keeps arguments sent as an object', () => {
    const { result, failure } = readEvents([
      chunk({ tool_calls: 'get_weather' }),
      chunk({ tool_calls: [null, 7, 'x', { index: 1e9, function: { name: 'far' } }, { index: -1, function: { name: 'negative' } }] }),
      calls({ index: 0, function: { name: 42, arguments: { city: 'Bern' } } }),
      calls({ index: 0, function: { name: 'get_weather', arguments: 17 } }),
      finish('tool_calls'),
    ]);
    expect(failure).toBeNull();
    // Pieces whose index cannot be a slot are dropped; a name of the wrong type waits for a string one.
    expect(named(result)).toEqual([{ index: 0, id: null, name: 'get_weather', args: '{"city":"Bern"}' }]);
  });

  it('holds what an endpoint can make it keep: at most 128 calls, and 1 MiB of arguments a call', () => {
    const many = readEvents(
      Array.from({ length: 300 }, (_, index) => calls({ index: index % 200, function: { name: `f${index}`, arguments: '{}' } })),
    );
    expect(many.result.toolCalls).toHaveLength(128);
    const piece = 'x'.repeat(64 * 1024);
    const long = readEvents(Array.from({ length: 40 }, () => calls({ index: 0, function: { arguments: piece } })));
    expect(long.result.toolCalls[0]!.arguments.length).toBe(1024 * 1024);
  });
});

describe('the timing of a request that called a function', () => {
  it('TTFC at the first call chunk, calls complete at the last one when every call parses, and neither without a call', () => {
    const completion = emptyCompletion();
    completion.t0 = 100;
    Object.assign(completion, {
      contentChunkTimes: [130, 150, 170],
      toolCallChunkTimes: [130, 150, 170],
      toolCalls: [{ ...call('get_weather', '{"city":"Lisbon"}'), firstAt: 130, lastAt: 170 }],
      finishAt: 175,
      finishReason: 'tool_calls',
    });
    expect(deriveRequestMetrics(completion)).toMatchObject({ ttft_ms: 30, ttfc_ms: 30, tool_call_ms: 70, e2e_ms: 75 });
    // Arguments that do not parse: the call began, but was never complete.
    completion.toolCalls = [{ ...call('get_weather', '{"city":"Lis'), firstAt: 130, lastAt: 170 }];
    expect(deriveRequestMetrics(completion)).toMatchObject({ ttfc_ms: 30, tool_call_ms: null });
    // A stream cut off mid-call is not a complete call either, whatever parsed so far.
    completion.toolCalls = [{ ...call('get_weather', '{}'), firstAt: 130, lastAt: 170 }];
    completion.error = { class: 'partial_stream', message: 'cut' };
    expect(deriveRequestMetrics(completion)).toMatchObject({ ttfc_ms: 30, tool_call_ms: null });
    const text = emptyCompletion();
    Object.assign(text, { t0: 0, contentChunkTimes: [5], answerChunkTimes: [5], finishAt: 6 });
    expect(deriveRequestMetrics(text)).not.toHaveProperty('ttfc_ms');
  });
});

describe('judging the calls of an answer', () => {
  const offered = (patch: Partial<Parameters<typeof judgeToolCalls>[0]> = {}) => ({ tools: [WEATHER], checks: [], ...patch });

  it('passes valid calls, and fails a call that does not parse, names an undeclared function or misses a required field', () => {
    expect(judgeToolCalls(offered(), [call('get_weather', '{"city":"Lisbon","unit":"c"}')])).toMatchObject({
      calls: 1,
      valid: 1,
      argument_chars: 28,
      results: [{ check: 'tool_calls', passed: true }],
    });
    const cases: [StreamedToolCall, string][] = [
      [call('get_weather', '{"city":"Lis'), 'get_weather: arguments are not JSON'],
      [call('get_weather', '["Lisbon"]'), 'get_weather: arguments are not a JSON object'],
      [call('get_weather', '{"unit":"c"}'), "get_weather: data must have required property 'city'"],
      [call('get_weather', '{"city":"Lisbon","unit":"kelvin"}'), 'get_weather: data/unit must be equal to one of the allowed values'],
      [call('send_mail', '{}'), 'a call to undeclared "send_mail"'],
      [call('', '{}'), 'a call without a function name'],
    ];
    for (const [bad, detail] of cases) {
      const judged = judgeToolCalls(offered(), [call('get_weather', '{"city":"Oslo"}'), bad]);
      expect(judged, detail).toMatchObject({
        calls: 2,
        valid: 1,
        results: [{ check: 'tool_calls', passed: false, detail: `1 of 2 invalid: ${detail}` }],
      });
    }
  });

  it("says nothing of a private run's answer: no undeclared name, no value, no path into the arguments", () => {
    const judged = judgeToolCalls(offered(), [call('secret_fn', '{}'), call('get_weather', '{"city":"Lisbon","unit":"kelvin"}')], {
      private: true,
    });
    expect(judged.results[0]!.detail).toBe(
      '2 of 2 invalid: a call to an undeclared function; get_weather: does not match the schema: 1 error (enum)',
    );
    expect(JSON.stringify(judged)).not.toMatch(/secret_fn|kelvin|Lisbon|unit/);
  });

  it('fails an answer without a call only where the request required one, and each tool_call check on the function it names', () => {
    expect(judgeToolCalls(offered({ tool_choice: 'required' }), []).results).toEqual([
      { check: 'tool_calls', passed: false, detail: 'no function call in the answer, and the request required one' },
    ]);
    expect(judgeToolCalls(offered({ tool_choice: { type: 'function', function: { name: 'get_weather' } } }), []).results[0]!.passed).toBe(
      false,
    );
    // Under "auto" a plain answer may be right: nothing is judged, so the text checks decide.
    const auto = judgeToolCalls(offered({ tool_choice: 'auto' }), []);
    expect(auto.results).toEqual([]);
    expect(withToolCallJudgement({ accepted: true, results: [{ check: 'contains', passed: true }] }, auto).accepted).toBe(true);
    expect(withToolCallJudgement(null, auto).accepted).toBeNull();

    const checked = offered({ checks: [{ tool_call: 'get_weather' }] });
    expect(withToolCallJudgement(null, judgeToolCalls(checked, [call('get_weather', '{"city":"Oslo"}')])).accepted).toBe(true);
    expect(judgeToolCalls(checked, []).results).toEqual([{ check: 'tool_call', passed: false, detail: 'no call to get_weather' }]);
    // The named function was called, but another call in the same answer is invalid: the task failed.
    const mixed = judgeToolCalls(checked, [call('get_weather', '{"city":"Oslo"}'), call('get_weather', '{}')]);
    expect(withToolCallJudgement(null, mixed)).toMatchObject({
      accepted: false,
      results: [{ passed: false }, { check: 'tool_call', passed: false }],
    });
    // An empty argument text is a call with no arguments.
    const bare: ToolDef = { type: 'function', function: { name: 'now' } };
    expect(judgeToolCalls({ tools: [bare], checks: [] }, [call('now', '')]).valid).toBe(1);
  });
});

describe('a run that offers tools, against a real local HTTP stream', () => {
  it('stores each request’s call times, counts and arguments, counts the argument tokens after the load, and summarizes them', async () => {
    const twoPieces = [
      { after: 0, data: role },
      { after: 10, data: calls({ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather' } }) },
      { after: 5, data: calls({ index: 0, function: { arguments: '{"city": ' } }) },
      { after: 5, data: calls({ index: 0, function: { arguments: '"Lisbon"}' } }) },
      { after: 2, data: finish('tool_calls') },
      { after: 1, data: usage(30, 12) },
      { after: 1, data: DONE },
    ];
    const baseUrl = await sseServer(twoPieces);
    const workload = oneGroupWorkload([
      resolvedItem({
        id: 'weather',
        messages: [{ role: 'user', content: 'Weather in Lisbon?' }],
        tools: [WEATHER],
        tool_choice: 'required',
        checks: [{ tool_call: 'get_weather' }],
      }),
    ]);
    const db = openDatabase(path.join(tempDir(), 'runs.db'));
    try {
      const store = new RunStore(db);
      const run = async (privateRun: boolean) => {
        const { runId, execution } = await runAgainst(store, workload, baseUrl, {
          stop: { requests: 3, durationMs: null },
          private: privateRun,
          afterLoadTokenCounter: llamaServerTokenCounter({ baseUrl, headers: {} }),
        });
        expect(execution.status).toBe('completed');
        return runId;
      };
      const runId = await run(false);
      const rows = store.requests(runId);
      expect(rows).toHaveLength(3);
      for (const row of rows) {
        expect(row.accepted).toBe(1);
        expect(row.output_text).toBe('');
        expect(row.ttfc_ms).toBe(row.ttft_ms);
        expect(row.ttfc_ms).toBeGreaterThanOrEqual(9);
        // The call completes with its last argument piece, sent 10 ms after the name; on a busy machine the pieces
        // can reach the client together (a read delayed, the next on time), so only their order is certain here.
        expect(row.tool_call_ms!).toBeGreaterThanOrEqual(row.ttfc_ms!);
        // The stand-in's /tokenize counts words: `{"city":` and `"Lisbon"}` are two.
        expect(JSON.parse(row.tool_calls_json!)).toEqual({
          calls: 1,
          valid: 1,
          argument_chars: 18,
          argument_tokens: 2,
          argument_tokens_note: null,
          text: [{ name: 'get_weather', arguments: '{"city": "Lisbon"}' }],
        });
      }
      const summary = summarizeCompleted(store.measuredRequests(runId), { runId });
      expect(summary.tool_calls).toMatchObject({
        requests: 3,
        requests_with_calls: 3,
        calls: 3,
        valid_calls: 3,
        valid_share: 1,
        ttfc_ms: { n: 3 },
        tool_call_ms: { n: 3 },
        argument_tokens: { n: 3, mean: 2 },
      });
      expect(toolCallsLine(summary.tool_calls!)).toMatch(
        /^tool calls: 3 of 3 answers called a function; 3 of 3 calls valid \(100\.0 %\); first call chunk p50 [\d.]+ ms, calls complete p50 [\d.]+ ms; 2\.0 argument tokens mean$/,
      );

      // A private run keeps the counts and the times, not the calls.
      const privateRows = store.requests(await run(true));
      expect(privateRows.map((row) => JSON.parse(row.tool_calls_json!))).toEqual(
        Array.from({ length: 3 }, () => ({ calls: 1, valid: 1, argument_chars: 18, argument_tokens: 2, argument_tokens_note: null })),
      );
    } finally {
      db.close();
    }
  });

  it('a plain-text answer to a request that required a call is a failed task, and the summary says no answer called', async () => {
    const baseUrl = await sseServer([
      { after: 0, data: role },
      { after: 5, data: say('It is sunny.') },
      { after: 2, data: finish() },
      { after: 1, data: DONE },
    ]);
    const workload = oneGroupWorkload([
      resolvedItem({ id: 'w', messages: [{ role: 'user', content: 'Weather?' }], tools: [WEATHER], tool_choice: 'required' }),
    ]);
    const db = openDatabase(path.join(tempDir(), 'runs.db'));
    try {
      const store = new RunStore(db);
      const { runId } = await runAgainst(store, workload, baseUrl, { stop: { requests: 2, durationMs: null } });
      const rows = store.requests(runId);
      expect(rows.map((row) => [row.accepted, row.ttfc_ms, row.tool_call_ms])).toEqual([
        [0, null, null],
        [0, null, null],
      ]);
      expect(JSON.parse(rows[0]!.acceptance_json!).results).toEqual([
        { check: 'tool_calls', passed: false, detail: 'no function call in the answer, and the request required one' },
      ]);
      const summary = summarizeCompleted(store.measuredRequests(runId), { runId });
      expect(toolCallsLine(summary.tool_calls!)).toBe(
        'tool calls: 0 of 2 answers called a function; none called, so no call was timed or judged',
      );
      expect(summary.accepted_rate).toBe(0);
    } finally {
      db.close();
    }
  });

  it('an agent exchange gives each call back with its scripted result until the model answers, each step a request of its own', async () => {
    const bodies: Record<string, unknown>[] = [];
    const toolCall = (name: string, args: string) => [
      { after: 0, data: role },
      { after: 5, data: calls({ index: 0, id: `call_${bodies.length}`, type: 'function', function: { name, arguments: args } }) },
      { after: 2, data: finish('tool_calls') },
      { after: 1, data: DONE },
    ];
    // Calls get_weather until a result comes back, then answers with it; an item of the second kind never stops calling.
    const baseUrl = await sseServer((body) => {
      bodies.push(body);
      const messages = body.messages as { role: string; content: string | null }[];
      const last = messages[messages.length - 1]!;
      if (last.role === 'tool' && !String(last.content).includes('error')) {
        const reply = `It is ${JSON.parse(last.content!).temp_c} degrees.`;
        return [
          { after: 0, data: role },
          { after: 5, data: say(reply) },
          { after: 2, data: finish() },
          { after: 1, data: DONE },
        ];
      }
      return toolCall(messages.length > 3 ? 'unscripted_fn' : 'get_weather', '{"city":"Lisbon"}');
    });
    const unscripted: ToolDef = { type: 'function', function: { name: 'unscripted_fn' } };
    const workload = oneGroupWorkload([
      resolvedItem({
        id: 'agent',
        messages: [{ role: 'user', content: 'Weather in Lisbon?' }],
        tools: [WEATHER, unscripted],
        tool_choice: 'required',
        checks: [{ tool_call: 'get_weather' }, { contains: 'degrees' }],
        agent: { tool_results: { get_weather: '{"temp_c": 18}' }, max_steps: 3, think_time: { fixed_ms: 20 } },
      }),
    ]);
    const db = openDatabase(path.join(tempDir(), 'runs.db'));
    try {
      const store = new RunStore(db);
      const { runId, execution } = await runAgainst(store, workload, baseUrl, { stop: { requests: 2, durationMs: null } });
      expect(execution.status).toBe('completed');
      const rows = store.requests(runId);
      // Two exchanges of two steps: a valid call, then the answer that used its result.
      expect(rows.map((row) => [row.conversation, row.turn, row.accepted, row.item_id])).toEqual([
        [0, 1, 1, 'agent#1'],
        [0, 2, 1, 'agent#2'],
        [1, 1, 1, 'agent#1'],
        [1, 2, 1, 'agent#2'],
      ]);
      expect(rows[1]!.output_text).toBe('It is 18 degrees.');
      // The second request carries the call back with its result, and lets the model choose.
      expect(bodies[1]).not.toHaveProperty('tool_choice');
      expect(bodies[0]).toMatchObject({ tool_choice: 'required' });
      expect(bodies[1]!.messages).toEqual([
        { role: 'user', content: 'Weather in Lisbon?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Lisbon"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '{"temp_c": 18}' },
      ]);
      // The next step waited out the think time after the previous answer.
      expect(rows[1]!.t0_ms - (rows[0]!.t0_ms + rows[0]!.e2e_ms!)).toBeGreaterThanOrEqual(19);
      const summary = summarizeCompleted(store.measuredRequests(runId), { runId });
      expect(summary.tool_calls!.exchanges).toMatchObject({ count: 2, answered: 2, steps: { mean: 2 }, e2e_ms: { n: 2 } });
      // Each exchange's time runs from its first send to its last step's end: both steps and the think time between them.
      const exchangeTimes = [0, 1].map((send) => {
        const [first, last] = rows.filter((row) => row.conversation === send);
        expect(last!.t0_ms + last!.e2e_ms! - first!.t0_ms).toBeGreaterThan(first!.e2e_ms! + last!.e2e_ms! + 19);
        return last!.t0_ms + last!.e2e_ms! - first!.t0_ms;
      });
      expect(summary.tool_calls!.exchanges!.e2e_ms.min).toBeCloseTo(Math.min(...exchangeTimes), 6);
      expect(summary.turns!.map((turn) => turn.turn)).toEqual([1, 2]);
      expect(toolCallsLine(summary.tool_calls!)).toMatch(/; 2 agent exchanges, 2 answered, steps mean 2\.0, exchange p50 [\d.]+ ms$/);

      // A model that never stops calling: the exchange ends at max_steps, its last step judged as its answer; a function
      // without a scripted result gets an error result.
      bodies.length = 0;
      const looping = oneGroupWorkload([
        resolvedItem({
          id: 'loop',
          messages: [
            { role: 'user', content: 'Go' },
            { role: 'assistant', content: 'Ok' },
            { role: 'user', content: 'Again' },
          ],
          tools: [WEATHER, unscripted],
          checks: [{ contains: 'degrees' }],
          agent: { tool_results: {}, max_steps: 3, think_time: { fixed_ms: 0 } },
        }),
      ]);
      const loop = await runAgainst(store, looping, baseUrl);
      // The steps that called are judged on their calls (valid); the last one, on its text (no "degrees" in it).
      expect(store.requests(loop.runId).map((row) => [row.turn, row.accepted])).toEqual([
        [1, 1],
        [2, 1],
        [3, 0],
      ]);
      expect((bodies[2]!.messages as { role: string; content: string }[]).at(-1)).toEqual({
        role: 'tool',
        tool_call_id: 'call_2',
        content: '{"error":"no result for unscripted_fn"}',
      });
      const loopSummary = summarizeCompleted(store.measuredRequests(loop.runId), { runId: loop.runId });
      expect(loopSummary.tool_calls!.exchanges).toMatchObject({ count: 1, answered: 0, steps: { mean: 3 } });
    } finally {
      db.close();
    }
  });
});
