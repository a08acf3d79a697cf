import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { createParser } from 'eventsource-parser';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/main/core/errors';
import { GgufFormatError, readGgufHeader } from '../../src/main/models/gguf-reader';
import { RpcDispatcher } from '../../src/main/rpc/dispatcher';
import { parseServerMetrics } from '../../src/main/telemetry/metrics-scraper';
import { parseWorkloadText } from '../../src/main/workload/parse-workload';
import type { AppServices } from '../../src/shared/contract';
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

  it('SSE parsing: any chunking of any byte stream never throws out of the parser', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 2000 }), fc.array(fc.nat(50), { maxLength: 40 }), (stream, cuts) => {
        const events: string[] = [];
        const parser = createParser({ onEvent: (event) => events.push(event.data), onError: () => {} });
        let offset = 0;
        for (const cut of cuts) {
          parser.feed(stream.slice(offset, offset + cut));
          offset += cut;
        }
        parser.feed(stream.slice(offset));
      }),
      RUNS,
    );
  });

  it('SSE parsing: however a stream of events is cut into chunks, exactly its events come out, in order', () => {
    const data = fc.string({ maxLength: 200 }).filter((text) => !/[\r\n]/.test(text));
    fc.assert(
      fc.property(fc.array(data, { maxLength: 30 }), fc.array(fc.nat(64), { maxLength: 60 }), (sent, cuts) => {
        const stream = sent.map((text) => `data: ${text}\n\n`).join('');
        const events: string[] = [];
        const parser = createParser({ onEvent: (event) => events.push(event.data) });
        let offset = 0;
        for (const cut of cuts) {
          parser.feed(stream.slice(offset, offset + cut));
          offset += cut;
        }
        parser.feed(stream.slice(offset));
        expect(events).toEqual(sent);
      }),
      RUNS,
    );
  });

  it('Prometheus parsing: arbitrary text gives numbers or nulls, never a crash', () => {
    const lines = fc.array(
      fc.oneof(
        fc.string({ maxLength: 80 }),
        fc.constantFrom(
          '# TYPE llamacpp:tokens_predicted_total counter',
          'llamacpp:tokens_predicted_total 12',
          'llamacpp:requests_processing NaN',
          'x{a="b"} 1e309',
          '# HELP',
        ),
      ),
      { maxLength: 30 },
    );
    fc.assert(
      fc.property(lines, (text) => {
        try {
          const sample = parseServerMetrics(text.join('\n'), 0);
          for (const value of [sample.predictedTokensTotal, sample.promptTokensTotal, sample.requestsProcessing])
            expect(value === null || typeof value === 'number').toBe(true);
        } catch (error) {
          // The parser library rejects malformed exposition text with an Error; what matters is that it is catchable.
          expect(error).toBeInstanceOf(Error);
        }
      }),
      RUNS,
    );
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
