import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/main/core/errors';
import { GgufFormatError, readGgufHeader } from '../../src/main/models/gguf-reader';
import { RpcDispatcher } from '../../src/main/rpc/dispatcher';
import { createCompletionStreamReader, emptyCompletion } from '../../src/main/client/stream-client';
import { parseServerMetrics } from '../../src/main/telemetry/metrics-scraper';
import { parseWorkloadText } from '../../src/main/workload/parse-workload';
import type { AppServices } from '../../src/shared/contract';
import { ErrorCode } from '../../src/shared/errors';
import { writeValidTinyModel } from '../support/hostile-gguf';

// Property-based hostile input: each parser either succeeds or fails with its own clear
// error; none crashes, hangs or allocates what the input merely claims.
const RUNS = { numRuns: 300, seed: 20261130 };

describe('hostile input', () => {
  it('workload parser: arbitrary text and arbitrary YAML-ish structures give a workload or a named error', () => {
    const yamlish = fc.oneof(
      fc.string({ maxLength: 400 }),
      fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value)),
      fc
        .array(
          fc.constantFrom(
            'name: x\n',
            'groups:\n',
            '  - name: g\n',
            '    items:\n',
            '      - id: a\n',
            '        prompt: p\n',
            '        max_tokens: -1\n',
            '&a [*a]\n',
            '*b\n',
            '  ',
            '- ',
            ':',
            '{',
            '"',
          ),
          { maxLength: 30 },
        )
        .map((parts) => parts.join('')),
    );
    fc.assert(
      fc.property(yamlish, (text) => {
        try {
          const def = parseWorkloadText(text, 'fuzz.yaml');
          expect(def.groups.length).toBeGreaterThan(0);
        } catch (error) {
          expect(error).toBeInstanceOf(AppError);
          expect((error as Error).message).toMatch(/^Invalid workload fuzz\.yaml:/);
        }
      }),
      RUNS,
    );
  });

  it('GGUF reader: random bytes and damaged headers are refused with a format error and bounded memory', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inferlab-fuzz-'));
    const valid = path.join(dir, 'valid.gguf');
    writeValidTinyModel(valid);
    const original = fs.readFileSync(valid);
    const target = path.join(dir, 'fuzz.gguf');
    const heapBefore = process.memoryUsage().heapUsed;
    try {
      fc.assert(
        fc.property(
          fc.oneof(
            fc.uint8Array({ maxLength: 512 }).map((bytes) => Buffer.from(bytes)),
            fc
              .tuple(fc.nat(original.length - 1), fc.uint8Array({ minLength: 1, maxLength: 16 }), fc.nat(original.length))
              .map(([at, patch, cut]) => {
                const bytes = Buffer.from(original);
                Buffer.from(patch).copy(bytes, Math.min(at, bytes.length - patch.length));
                return bytes.subarray(0, Math.max(1, cut));
              }),
          ),
          (bytes) => {
            fs.writeFileSync(target, bytes);
            try {
              readGgufHeader(target);
            } catch (error) {
              expect(error).toBeInstanceOf(GgufFormatError);
            }
          },
        ),
        RUNS,
      );
      expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(200 * 1024 * 1024);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  /** Reads `bytes` cut at the given piece lengths, on a clock that ticks once per event, so two readings compare whole. */
  function readStream(bytes: Uint8Array, pieces: number[]) {
    const result = emptyCompletion();
    let tick = 0;
    const reader = createCompletionStreamReader(result, undefined, () => ++tick);
    let offset = 0;
    for (const length of pieces) {
      reader.feed(bytes.subarray(offset, offset + length));
      offset += length;
    }
    reader.feed(bytes.subarray(offset));
    return { result, failure: reader.failure };
  }

  const lineEnd = fc.constantFrom('\n', '\r\n', '\r');
  const pieceLengths = fc.array(fc.nat(24), { maxLength: 80 });

  it('stream client: however a valid event stream is cut into byte chunks, it reads the same tokens as in one chunk', () => {
    // Multi-byte characters, so that cuts land inside UTF-8 sequences.
    const token = fc.record({
      kind: fc.constantFrom('answer', 'reasoning'),
      text: fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }),
    });
    const stream = fc.record({
      tokens: fc.array(token, { maxLength: 25 }),
      eol: lineEnd,
      comments: fc.boolean(),
      finishReason: fc.constantFrom('stop', 'length'),
      usage: fc.record({ prompt_tokens: fc.nat(5000), completion_tokens: fc.nat(5000) }),
    });
    fc.assert(
      fc.property(stream, pieceLengths, ({ tokens, eol, comments, finishReason, usage }, pieces) => {
        const event = (payload: unknown) => `${comments ? `: keep-alive${eol}` : ''}data: ${JSON.stringify(payload)}${eol}${eol}`;
        const text = [
          ...tokens.map(({ kind, text }) =>
            event({ choices: [{ delta: kind === 'answer' ? { content: text } : { reasoning_content: text } }] }),
          ),
          event({ choices: [{ delta: {}, finish_reason: finishReason }] }),
          event({ choices: [], usage }),
          `data: [DONE]${eol}${eol}`,
        ].join('');
        const bytes = new TextEncoder().encode(text);
        const whole = readStream(bytes, []);
        expect(whole.failure).toBeNull();
        expect(whole.result.text).toBe(
          tokens
            .filter((t) => t.kind === 'answer')
            .map((t) => t.text)
            .join(''),
        );
        expect(whole.result.reasoningText).toBe(
          tokens
            .filter((t) => t.kind === 'reasoning')
            .map((t) => t.text)
            .join(''),
        );
        expect(whole.result.contentChunkTimes).toHaveLength(tokens.length);
        expect(whole.result.finishReason).toBe(finishReason);
        expect(whole.result.usage).toEqual({ ...usage, cached_tokens: null });
        // A lone CR may be the first half of a CRLF, so a CR-only stream's last event waits for the connection's end.
        expect(whole.result.endAt).toBe(eol === '\r' ? null : tokens.length + 3);
        expect(readStream(bytes, pieces)).toEqual(whole);
      }),
      RUNS,
    );
  });

  it('stream client: arbitrary bytes, cut anywhere, give a reading or a classified failure, the same for every cut', () => {
    const payload = fc.oneof(
      fc.constantFrom(
        '[DONE]',
        '{"choices":[{"delta":{"content":"é😀"}}]}',
        '{"choices":[{"delta":{"content":5,"reasoning_content":{}},"finish_reason":7}]}',
        '{"choices":[null],"usage":null,"timings":"x"}',
        '{"choices":{"0":{"text":"a"}}}',
        '{"choices":[{"delta":null,"text":"b","finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":"2"}}',
        '{"error":{"message":"overloaded"}}',
        '{"error":"x"}',
        'null',
        '[]',
        '7',
        '{',
      ),
      fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)),
      fc.string({ unit: 'binary', maxLength: 20 }),
    );
    const event = fc.tuple(fc.constantFrom('data: ', 'data:'), payload, lineEnd).map(([field, data, eol]) => `${field}${data}${eol}${eol}`);
    const noise = fc.oneof(
      fc.constantFrom(': comment', 'event: message', 'retry: x', 'id: 1', '\uFEFF', 'data'),
      lineEnd,
      fc.string({ maxLength: 8 }),
    );
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 600 }),
      fc.array(fc.oneof(event, noise), { maxLength: 30 }).map((parts) => new TextEncoder().encode(parts.join(''))),
    );
    const outcomes = { read: 0, failed: 0 };
    fc.assert(
      fc.property(bytes, pieceLengths, (input, pieces) => {
        const whole = readStream(input, []);
        if (whole.failure) {
          outcomes.failed += 1;
          const expected = whole.failure.class === 'malformed_chunk' ? /^not (JSON|a JSON object): / : /^server error in stream: /;
          expect(['malformed_chunk', 'http_status']).toContain(whole.failure.class);
          expect(whole.failure.message).toMatch(expected);
        } else outcomes.read += 1;
        expect(typeof whole.result.text).toBe('string');
        expect(typeof whole.result.reasoningText).toBe('string');
        expect(whole.result.finishReason === null || typeof whole.result.finishReason === 'string').toBe(true);
        expect(readStream(input, pieces)).toEqual(whole);
      }),
      { ...RUNS, numRuns: 1000 },
    );
    // Both ways out were taken, or the property proved less than it says.
    expect(outcomes.failed).toBeGreaterThan(50);
    expect(outcomes.read).toBeGreaterThan(50);
  });

  it('Prometheus parsing: arbitrary text gives numbers or nulls, or an invalid_input AppError naming the refused line', () => {
    const lines = fc.array(
      fc.oneof(
        fc.string({ maxLength: 80 }),
        fc.constantFrom(
          '# TYPE llamacpp:tokens_predicted_total counter',
          'llamacpp:tokens_predicted_total 12',
          'llamacpp:requests_processing NaN',
          'x{a="b"} 1e309',
          'x{a=b} 1',
          '# HELP',
        ),
      ),
      { maxLength: 30 },
    );
    let refused = 0;
    fc.assert(
      fc.property(lines, (text) => {
        try {
          const sample = parseServerMetrics(text.join('\n'), 0);
          for (const value of [sample.predictedTokensTotal, sample.promptTokensTotal, sample.requestsProcessing])
            expect(value === null || typeof value === 'number').toBe(true);
        } catch (error) {
          refused += 1;
          expect(error).toBeInstanceOf(AppError);
          expect((error as AppError).code).toBe(ErrorCode.InvalidInput);
          expect((error as AppError).message).toMatch(/^Invalid Prometheus metrics: Encountered invalid line: /);
        }
      }),
      RUNS,
    );
    expect(refused).toBeGreaterThan(10);
  });

  it('RPC boundary: any JSON envelope is answered with a result or {code, message}', async () => {
    const services = {
      doctor: { report: async () => ({ checks: [], engine: null, gpus: [], databasePath: 'x', demoModels: [] }) },
      runs: { get: async (id: string) => ({ id }) },
    } as unknown as AppServices;
    const dispatcher = new RpcDispatcher(services);
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.jsonValue({ maxDepth: 3 }),
          fc.record({
            service: fc.constantFrom('doctor', 'runs', 'servers', '__proto__', 'constructor'),
            method: fc.constantFrom('report', 'get', 'start', 'toString', 'hasOwnProperty'),
            args: fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }),
          }),
        ),
        async (request) => {
          const response = await dispatcher.dispatch(request);
          if (!response.ok) {
            expect(typeof response.error.code).toBe('string');
            expect(typeof response.error.message).toBe('string');
          }
        },
      ),
      RUNS,
    );
  });
});
