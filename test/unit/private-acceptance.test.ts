import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Ajv } from 'ajv';
import { afterEach, describe, expect, it } from 'vitest';
import { executeRun } from '../../src/main/runner/run-executor';
import { openDatabase } from '../../src/main/store/database';
import { renderRunExport } from '../../src/main/store/export-run';
import { RunStore } from '../../src/main/store/run-store';
import { evaluateAcceptance, schemaFailureDetail } from '../../src/main/workload/acceptance';
import { createBareRun } from '../support/stored-request';
import { useTempDirs } from '../support/temp';
import { oneGroupWorkload, resolvedItem } from '../support/workload-items';

/**
 * A private run keeps no text of its prompts and outputs. A json_schema check that fails says
 * why, and Ajv's own words name where in the output it failed (`data/<key>`): keys the model
 * wrote. These plant a marker as such a key and look for it in what a private run keeps.
 */
const MARKER = 'MARKERxyz7q';
const tempDir = useTempDirs();

/** Schemas that fail on an output key, each with an output whose key is the marker. */
const LEAKING_CASES: { name: string; schema: Record<string, unknown>; output: unknown }[] = [
  { name: 'a value of the wrong type', schema: { type: 'object', additionalProperties: { type: 'number' } }, output: { [MARKER]: 'x' } },
  {
    name: 'a nested object missing a field',
    schema: { type: 'object', additionalProperties: { type: 'object', required: ['id'] } },
    output: { [MARKER]: {} },
  },
  {
    name: 'an extra field one level down',
    schema: { type: 'object', additionalProperties: { type: 'object', additionalProperties: false } },
    output: { [MARKER]: { [`${MARKER}-inner`]: 1 } },
  },
  { name: 'a key the schema refuses', schema: { type: 'object', propertyNames: { maxLength: 3 } }, output: { [MARKER]: 1 } },
];

describe('the detail of a failed json_schema check', () => {
  it('names the output’s keys in an ordinary run (the leak these guard against), and none of them in a private one', () => {
    for (const { name, schema, output } of LEAKING_CASES) {
      const text = JSON.stringify(output);
      const ordinary = evaluateAcceptance([{ json_schema: schema }], text, null).results[0]!;
      const kept = evaluateAcceptance([{ json_schema: schema }], text, null, undefined, { private: true }).results[0]!;
      expect(ordinary.passed, name).toBe(false);
      expect(kept.passed, name).toBe(false);
      expect(kept.detail, name).toMatch(/^does not match the schema: \d+ errors? \([a-zA-Z]+(, [a-zA-Z]+)*\)$/);
      expect(kept.detail, name).not.toContain(MARKER);
    }
    // At least one ordinary detail carries the marker: the private path is what keeps it out.
    const ordinaryDetails = LEAKING_CASES.map(({ schema, output }) =>
      evaluateAcceptance([{ json_schema: schema }], JSON.stringify(output), null),
    );
    expect(ordinaryDetails.some((result) => result.results[0]!.detail!.includes(MARKER))).toBe(true);
  });

  it('is built from the schema’s keywords alone, whatever the errors carry', () => {
    const ajv = new Ajv({ allErrors: true, strict: false });
    const validate = ajv.compile({ type: 'object', required: ['id'], properties: { n: { type: 'number' } } });
    expect(validate({ n: MARKER })).toBe(false);
    expect(schemaFailureDetail(validate.errors, { private: true })).toBe('does not match the schema: 2 errors (required, type)');
    // A keyword that is not a plain name (it never is, from Ajv) is not repeated.
    expect(schemaFailureDetail([{ ...validate.errors![0]!, keyword: `x ${MARKER}` }], { private: true })).toBe(
      'does not match the schema: 1 error (other)',
    );
    expect(schemaFailureDetail(validate.errors)).toContain('data/n must be number');
  });

  it('keeps no position from an output that is not JSON in a private run', () => {
    const [ordinary, kept] = [{}, { private: true }].map(
      (options) => evaluateAcceptance([{ json_schema: { type: 'object' } }], '{"a": 1} trailing', null, undefined, options).results[0]!,
    );
    expect(ordinary!.detail).toMatch(/^not JSON: parsing stopped at character \d+$/);
    expect(kept!.detail).toBe('not JSON');
  });
});

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** A constructed OpenAI-compatible server whose every answer is `answer`, streamed as one chunk. */
async function answering(answer: string): Promise<string> {
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (delta: Record<string, unknown>, finish: string | null) =>
        `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      response.end(`${chunk({ role: 'assistant', content: answer }, null)}${chunk({}, 'stop')}data: [DONE]\n\n`);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

/** Runs two requests whose answer carries the marker as a key, privately or not; the database's bytes and the export, as text. */
async function runWithMarkedAnswer(isPrivate: boolean): Promise<{ stored: Buffer; exported: string; acceptance: string[] }> {
  const baseUrl = await answering(JSON.stringify({ [MARKER]: 'not a number' }));
  const dir = tempDir();
  const file = path.join(dir, 'runs.db');
  const db = openDatabase(file);
  const store = new RunStore(db);
  const runId = createBareRun(store, { private: isPrivate });
  const execution = await executeRun({
    store,
    runId,
    workload: oneGroupWorkload([
      resolvedItem({
        messages: [{ role: 'user', content: 'Answer in JSON.' }],
        checks: [{ json_schema: { type: 'object', additionalProperties: { type: 'number' } } }],
      }),
    ]),
    target: { baseUrl },
    load: { mode: 'closed', concurrency: 1 },
    stop: { requests: 2, durationMs: null },
    warmup: 0,
    timeouts: { firstTokenMs: 5000, totalMs: 10_000 },
    private: isPrivate,
    references: null,
  });
  expect(execution.status).toBe('completed');
  const rows = store.requests(runId);
  expect(rows.map((row) => row.accepted)).toEqual([0, 0]);
  const exported = JSON.stringify(renderRunExport(store, runId));
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  const stored = Buffer.concat(
    fs
      .readdirSync(dir)
      .filter((name) => name.startsWith('runs.db'))
      .map((name) => fs.readFileSync(path.join(dir, name))),
  );
  return { stored, exported, acceptance: rows.map((row) => row.acceptance_json ?? '') };
}

describe('a private run whose answer fails its json_schema check', () => {
  it('(control) an ordinary run keeps the answer, and the detail names its key', async () => {
    const { stored, acceptance } = await runWithMarkedAnswer(false);
    expect(stored.includes(MARKER)).toBe(true);
    expect(acceptance[0]).toContain(`data/${MARKER}`);
  });

  it('keeps the outcome and a text-free reason: the key is in neither the database nor the export', async () => {
    const { stored, exported, acceptance } = await runWithMarkedAnswer(true);
    for (const text of acceptance)
      expect(JSON.parse(text)).toEqual({
        accepted: false,
        results: [{ check: 'json_schema', passed: false, detail: 'does not match the schema: 1 error (type)' }],
      });
    expect(stored.includes(MARKER)).toBe(false);
    expect(exported).not.toContain(MARKER);
  });
});
