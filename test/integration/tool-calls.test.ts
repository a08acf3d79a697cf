import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { inferlab, inferlabJson } from '../support/cli';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

describe('function calls on the real llama-server', () => {
  it('runs the built-in tool-calls workload on a demo model: a server started with --jinja, every request answered, every task failed as the model cannot call', async () => {
    const db = path.join(tempDir(), 't.db');
    // One pass over the workload's four items; the agent exchange ends at its first step, which answers without a call.
    const summary = await inferlabJson(['run', '--workload', 'tool-calls', '--model', 'demo:q8_0', '--requests', '4'], db);
    expect(summary.status).toBe('completed');
    expect(summary.requests).toMatchObject({ attempted: 4, completed: 4, failed: 0, accepted: 0, checked: 4 });
    // The demo model's template has no tool support: the server drops the tools and the model answers in text.
    expect(summary.tool_calls).toMatchObject({
      requests: 4,
      requests_with_calls: 0,
      calls: 0,
      valid_share: null,
      ttfc_ms: { n: 0 },
      exchanges: { count: 1, answered: 1, steps: { mean: 1 } },
    });
    expect(summary.metrics.ttft_ms.n).toBe(4);

    const record = new Database(db, { readonly: true });
    try {
      const server = JSON.parse(
        (record.prepare('SELECT server_json FROM runs WHERE id = ?').get(summary.run_id) as { server_json: string }).server_json,
      );
      expect(server.effectiveConfig.argv).toContain('--jinja');
      const judged = record.prepare('SELECT item_id, acceptance_json FROM requests WHERE run_id = ? ORDER BY seq').all(summary.run_id) as {
        item_id: string;
        acceptance_json: string;
      }[];
      const results = Object.fromEntries(judged.map((row) => [row.item_id, JSON.parse(row.acceptance_json).results]));
      // Required: the plain answer fails for want of a call, and the check names the function it wanted.
      expect(results.weather).toEqual([
        { check: 'tool_calls', passed: false, detail: 'no function call in the answer, and the request required one' },
        { check: 'tool_call', passed: false, detail: 'no call to get_weather' },
      ]);
      // "auto" allows a plain answer; the check still wants the call.
      expect(results.calendar).toEqual([{ check: 'tool_call', passed: false, detail: 'no call to create_event' }]);
      // The exchange's first step answered in text: it is the exchange's answer, judged as the first step and on its text.
      expect(results['weather-answer#1']).toEqual([
        { check: 'regex', passed: expect.any(Boolean) },
        { check: 'tool_calls', passed: false, detail: 'no function call in the answer, and the request required one' },
        { check: 'tool_call', passed: false, detail: 'no call to get_weather' },
      ]);
    } finally {
      record.close();
    }

    const shown = await inferlab(['runs', 'show', summary.run_id, '--db', db]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(
      /^tool calls: 0 of 4 answers called a function; none called, so no call was timed or judged; 1 agent exchange, 1 answered, steps mean 1\.0, exchange p50 [\d.]+ ms$/m,
    );
    expect(shown.stdout).toMatch(/accepted-task rate 0\.0%/);
  });
});
