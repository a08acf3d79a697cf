import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
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

  it('races two models live: each lane run on its own warmed server one after another, then played together', async () => {
    const dir = tempDir();
    const db = path.join(dir, 'live.db');
    // A generated item: its words are sized without a tokenizer, so every lane is sent the same text.
    const live = await inferlab([
      'race',
      '--model',
      'demo:q8_0',
      '--model',
      'demo:q4_k_m',
      '--item',
      'prefix-share#shared-prefix-p1-s2',
      '--max-tokens',
      '16',
      '--db',
      db,
      '--json',
    ]);
    expect(live.code, live.stderr).toBe(0);
    expect(live.stderr).toMatch(/^lane 1\/2: demo:q8_0, one request after one to warm the server$/m);
    expect(live.stderr).toMatch(/^lane 2\/2: demo:q4_k_m, /m);
    const race = JSON.parse(live.stdout) as {
      note: string;
      lanes: { label: string; runId: string; seq: number; chunks: { text: string }[]; outputTokens: number }[];
    };
    expect(race.note).toMatch(/^Run one after another, each on its own warmed server/);
    expect(race.lanes.map((lane) => lane.label.split(' · ')[0])).toEqual(['demo:q8_0', 'demo:q4_k_m']);
    for (const lane of race.lanes) {
      // The measured request follows the one that warmed the server, and the answer is whole from its chunks.
      expect(lane.seq).toBe(1);
      expect(lane.outputTokens).toBeGreaterThan(0);
      expect(lane.outputTokens).toBeLessThanOrEqual(16);
      expect(lane.chunks.map((chunk) => chunk.text).join('').length).toBeGreaterThan(0);
    }
    // Each lane is a stored run, raceable again later as any other.
    const again = await inferlabJson(['race', ...race.lanes.map((lane) => `${lane.runId}:${lane.seq}`)], db);
    expect(again.lanes.map((lane: { chunks: unknown[] }) => lane.chunks)).toEqual(race.lanes.map((lane) => lane.chunks));
    // The raced prompt is the workload's second item: the warm-up's prompt left nothing of it in the cache.
    const show = await inferlabJson(['runs', 'show', race.lanes[0]!.runId], db);
    expect(show.manifest.workload.name).toBe('race');
    expect(show.summary.cache.cached_prompt_tokens).toBeLessThan(show.summary.cache.prompt_tokens / 2);
    // 768 + 32 tokens by the word estimate: the lane's tokenizer counts the same words its own way.
    expect(show.summary.cache.prompt_tokens).toBeGreaterThan(600);

    // Together: both servers up and warmed, then both prompts at one instant; the note says they competed.
    // The second lane has a setting of its own (the demo adapter), and is named by it; the prompt is a workload's item.
    const together = await inferlab([
      'race',
      '--model',
      'demo:q8_0',
      '--model',
      'demo:q4_k_m',
      '--lane-set',
      '2:loraAdapter=demo:lora',
      '--item',
      'chat-short#planets',
      '--max-tokens',
      '16',
      '--together',
      '--db',
      db,
      '--json',
    ]);
    expect(together.code, together.stderr).toBe(0);
    expect(together.stderr).toMatch(/^2 lanes together: each starts its server and warms it, then all are sent the prompt at once$/m);
    const raced = JSON.parse(together.stdout) as typeof race;
    expect(raced.note).toMatch(/^Run together: .* the lanes competed for it/);
    expect(raced.lanes.map((lane) => [lane.label.split(' · ')[0], lane.seq])).toEqual([
      ['demo:q8_0', 1],
      ['demo:q4_k_m (loraAdapter=demo:lora)', 1],
    ]);
    for (const lane of raced.lanes) expect(lane.chunks.map((chunk) => chunk.text).join('').length).toBeGreaterThan(0);
    const record = new Database(db, { readonly: true });
    try {
      const sent = record.prepare('SELECT prompt_text FROM requests WHERE run_id = ? AND seq = 1').get(raced.lanes[0]!.runId) as {
        prompt_text: string;
      };
      expect(sent.prompt_text).toContain('Which planet is known as the Red Planet? One word.');
    } finally {
      record.close();
    }
    // An item that is not there, or not one answer, is refused naming what there is.
    const missing = await inferlab(['race', '--model', 'demo:q8_0', '--model', 'demo:q4_k_m', '--item', 'chat-short#moons', '--db', db]);
    expect(missing.stderr).toMatch(
      /item: .*chat-short\.yaml has no item "moons"; its written items are capital-france, arithmetic, planets, boiling, greeting, rewrite, list, translate$/m,
    );
    const generated = await inferlab([
      'race',
      '--model',
      'demo:q8_0',
      '--model',
      'demo:q4_k_m',
      '--item',
      'multi-turn-chat#chat-c1',
      '--db',
      db,
    ]);
    expect(generated.stderr).toMatch(
      /item: chat-c1 of .*multi-turn-chat\.yaml is a conversation \(the conversations generator\); a race streams one answer/,
    );
    expect((await inferlab(['race', '--model', 'a', '--model', 'b', '--item', 'chat-short', '--db', db])).stderr).toMatch(
      /--item takes WORKLOAD#ID/,
    );
    expect((await inferlab(['race', '--model', 'a', '--model', 'b', '--item', 'x#y', '--prompt', 'hi', '--db', db])).stderr).toMatch(
      /race --prompt or --item, not both/,
    );

    // Mistakes are named before any server starts.
    expect((await inferlab(['race', '--model', 'demo:q8_0', '--db', db])).stderr).toMatch(/a live race needs two to four --model, got 1/);
    expect((await inferlab(['race', 'abc', 'def', '--model', 'demo:q8_0', '--db', db])).stderr).toMatch(
      /either stored requests .* or --model lanes, not both/,
    );
    expect((await inferlab(['race', 'abc', 'def', '--prompt', 'hi', '--db', db])).stderr).toMatch(
      /--prompt is for a live race \(--model lanes\) only/,
    );
    expect((await inferlab(['race', 'abc', 'def', '--together', '--db', db])).stderr).toMatch(/--together is for a live race/);
    expect((await inferlab(['race', '--model', 'a', '--model', 'b', '--lane-set', '3:threads=1', '--db', db])).stderr).toMatch(
      /--lane-set expects N:FIELD=VALUE with N a lane from 1 to 2, got "3:threads=1"/,
    );
    expect((await inferlab(['race', '--model', 'a', '--model', 'b', '--max-tokens', '0', '--db', db])).stderr).toMatch(
      /--max-tokens must be a whole number from 1 to 4096/,
    );
  });
});
