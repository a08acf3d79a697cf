import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { inferlab } from '../support/cli';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

interface Exported {
  seq: number;
  warmup: boolean;
  scheduled_ms: number;
  t0_ms: number;
  prompt: string;
  prompt_tokens: number;
  cached_tokens: number;
  output_tokens: number;
  error_class: string | null;
}

const TRACE = [
  { timestamp: 1000, input_length: 1100, output_length: 8, hash_ids: [1, 2, 3] },
  { timestamp: 1300, input_length: 1200, output_length: 6, hash_ids: [1, 2, 4] },
  { timestamp: 1900, input_length: 700, output_length: 5, hash_ids: [5, 6] },
];

describe('trace replay against the real server', () => {
  it('builds prompts of the exact lengths, shared blocks token-identical and reused from the cache, sent at the trace timing', async () => {
    const dir = tempDir();
    const trace = path.join(dir, 'three.jsonl');
    fs.writeFileSync(trace, TRACE.map((record) => JSON.stringify(record)).join('\n') + '\n');
    const db = path.join(dir, 't.db');
    const run = await inferlab(['run', '--trace', trace, '--trace-speed', '2', '--model', 'demo:q8_0', '--db', db, '--json']);
    expect(run.code, run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout);
    expect(summary.load).toMatchObject({ mode: 'open' });
    const out = path.join(dir, 'export');
    expect((await inferlab(['export', summary.run_id, '--out', out, '--db', db])).code).toBe(0);
    const rows = fs
      .readFileSync(path.join(out, 'requests.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Exported)
      .sort((a, b) => a.seq - b.seq);
    expect(rows).toHaveLength(3);
    const prompts = rows.map((row) => JSON.parse(row.prompt) as number[]);
    for (const [index, row] of rows.entries()) {
      expect(row.error_class).toBeNull();
      // Exactly the trace's lengths: the ids sent, the server's own prompt count, and the answer.
      expect(prompts[index]).toHaveLength(TRACE[index]!.input_length);
      expect(row.prompt_tokens).toBe(TRACE[index]!.input_length);
      expect(row.output_tokens).toBe(TRACE[index]!.output_length);
    }
    // The first two share blocks 1 and 2: their first 1,024 tokens are the same ids, the third block is not.
    expect(prompts[1]!.slice(0, 1024)).toEqual(prompts[0]!.slice(0, 1024));
    expect(prompts[1]!.slice(1024, 1100)).not.toEqual(prompts[0]!.slice(1024, 1100));
    expect(prompts[2]!.slice(0, 16)).not.toEqual(prompts[0]!.slice(0, 16));
    // The server's cache proves the reuse: the second request found the two shared blocks, the others nothing.
    expect(rows[0]!.cached_tokens).toBe(0);
    expect(rows[1]!.cached_tokens).toBeGreaterThanOrEqual(1024);
    expect(rows[1]!.cached_tokens).toBeLessThan(1100);
    expect(rows[2]!.cached_tokens).toBeLessThan(16);
    // Scheduled at the trace's gaps at twice its speed; sent in the trace's order, never before the scheduled
    // time, and within the slip the run reports. How small that slip is on an idle machine is a benchmark
    // figure (npm run bench: the open-loop generator's slip), not something a shared machine can promise.
    const gaps = TRACE.map((record) => (record.timestamp - TRACE[0]!.timestamp) / 2);
    for (const [index, row] of rows.entries()) {
      expect(row.scheduled_ms - rows[0]!.scheduled_ms).toBeCloseTo(gaps[index]!, 6);
      expect(row.t0_ms).toBeGreaterThanOrEqual(row.scheduled_ms);
      expect(Math.abs(row.t0_ms - rows[0]!.t0_ms - gaps[index]!)).toBeLessThanOrEqual(summary.load.slip_ms_max + 1e-6);
    }
    const sends = rows.map((row) => row.t0_ms);
    expect(sends).toEqual([...sends].sort((a, b) => a - b));
    // The run says whether it kept to the trace: offered at the trace's mean rate, it is client-bound exactly
    // when a send slipped by more than the mean gap (at least 5 ms).
    const meanGap = gaps[gaps.length - 1]! / (gaps.length - 1);
    expect(summary.load.offered).toBeCloseTo(1000 / meanGap, 6);
    expect(summary.load.client_bound).toBe(summary.load.slip_ms_max > Math.max(5, meanGap));
    // The run exports as a trace again: hashes only, the same blocks shared, the same lengths, the replayed timing.
    const exported = fs
      .readFileSync(path.join(out, 'trace.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(exported).toEqual([
      { timestamp: 0, input_length: 1100, output_length: 8, hash_ids: [0, 1, 2] },
      { timestamp: 150, input_length: 1200, output_length: 6, hash_ids: [0, 1, 3] },
      { timestamp: 450, input_length: 700, output_length: 5, hash_ids: [4, 5] },
    ]);
    expect(fs.readFileSync(path.join(out, 'trace.jsonl'), 'utf8')).not.toMatch(/prompt|output"/);
  }, 120_000);

  it('names the line of a bad trace and refuses load flags a trace replaces', async () => {
    const dir = tempDir();
    const trace = path.join(dir, 'bad.jsonl');
    fs.writeFileSync(trace, `${JSON.stringify(TRACE[0])}\n{"timestamp": 5, "input_length": 600, "output_length": 4, "hash_ids": [1]}\n`);
    const bad = await inferlab(['run', '--trace', trace, '--model', 'demo:q8_0', '--db', path.join(dir, 'b.db')]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/bad\.jsonl:2: .*needs 2 block\(s\) of 512 tokens, but hash_ids has 1/);
    const flags = await inferlab(['run', '--trace', trace, '--rate', '2', '--model', 'demo:q8_0']);
    expect(flags.code).toBe(2);
    expect(flags.stderr).toMatch(/a trace replays its own arrival times/);
    const window = await inferlab(['run', '--trace', trace, '--trace-window', '9', '--model', 'demo:q8_0']);
    expect(window.code).toBe(2);
    expect(window.stderr).toMatch(/--trace-window takes START:END/);
  });
});
