import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { inferlab, inferlabJson } from '../support/cli';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

describe('inferlab race on requests measured on the real llama-server', () => {
  it('replays two stored requests at their recorded pace: plain lines off a terminal, the lanes as JSON, one HTML file', async () => {
    const dir = tempDir();
    const db = path.join(dir, 'race.db');
    const run = await inferlabJson(['run', '--workload', 'chat-short', '--model', 'demo:q8_0', '--requests', '2'], db);
    expect(run.status).toBe('completed');
    const refs = [`${run.run_id.slice(0, 8)}:0`, `${run.run_id.slice(0, 8)}:1`];

    const started = performance.now();
    const played = await inferlab(['race', ...refs, '--db', db]);
    const wallMs = performance.now() - started;
    expect(played.code, played.stderr).toBe(0);
    const lines = played.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^Replayed from stored runs: each lane plays at the pace its tokens arrived/);
    expect(lines.filter((line) => / first token at \d+ ms$/.test(line))).toHaveLength(2);
    expect(lines.filter((line) => / finished at \d+ ms, \d+ tokens, [\d.]+ tok\/s: "/.test(line))).toHaveLength(2);
    expect(lines.at(-1)).toMatch(/^order: 1\. lane [12] demo:q8_0 · [0-9a-f]{8}:[01] \d+ ms; 2\. lane [12] /);

    const { lanes } = JSON.parse((await inferlab(['race', ...refs, '--db', db, '--json'])).stdout) as {
      lanes: { chunks: { atMs: number; text: string }[]; endMs: number; textless: string | null }[];
    };
    // The answer is whole again from its chunks, which arrived in order, and the replay took at least as long as the slower lane.
    for (const lane of lanes) {
      expect(lane.textless).toBeNull();
      expect(lane.chunks.map((chunk) => chunk.text).join('').length).toBeGreaterThan(20);
      expect(lane.chunks.every((chunk, index) => index === 0 || chunk.atMs >= lane.chunks[index - 1]!.atMs)).toBe(true);
    }
    expect(wallMs).toBeGreaterThanOrEqual(Math.max(...lanes.map((lane) => lane.endMs)));

    const html = path.join(dir, 'race.html');
    const written = await inferlab(['race', ...refs, '--db', db, '--html', html]);
    expect(written.code, written.stderr).toBe(0);
    expect(fs.readFileSync(html, 'utf8')).toContain(JSON.stringify(lanes[0]!.chunks[1]!.text).slice(1, -1).replace(/</g, '\\u003c'));
    expect((await inferlab(['race', refs[0]!, '--db', db])).stderr).toMatch(/race needs two to four requests \(RUN or RUN:SEQ\), got 1/);
  });
});
