import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { inferlab } from '../support/cli';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

interface ExportedRequest {
  conversation: number | null;
  turn: number | null;
  warmup: boolean;
  t0_ms: number;
  end_ms: number;
  prompt: string;
  output: string;
  cached_tokens: number | null;
  prompt_tokens: number | null;
  error_class: string | null;
}

const USERS = [
  'Plan a weekend in the mountains.',
  'What should I pack for cold nights?',
  'Which trail suits a beginner?',
  'Sum it up in one line.',
];

function conversationWorkload(dir: string, history: 'actual' | 'reference'): string {
  const file = path.join(dir, `${history}.yaml`);
  const turns = USERS.map((user, index) => `          - { user: "${user}", reference: "Fixed answer ${index + 1}." }`).join('\n');
  fs.writeFileSync(
    file,
    `name: conv-${history}\ndefaults: { max_tokens: 12, temperature: 0 }\ngroups:\n  - name: chat\n    session: { history: ${history}, think_time: { fixed_ms: 150 } }\n    items:\n      - id: trip\n        system: You are a travel guide.\n        turns:\n${turns}\n`,
  );
  return file;
}

async function runConversations(dir: string, history: 'actual' | 'reference') {
  const db = path.join(dir, `${history}.db`);
  const run = await inferlab([
    'run',
    '--workload',
    conversationWorkload(dir, history),
    '--model',
    'demo:q8_0',
    '--concurrency',
    '2',
    '--requests',
    '2',
    '--warmup',
    '0',
    '--db',
    db,
    '--json',
  ]);
  expect(run.code, run.stderr).toBe(0);
  const summary = JSON.parse(run.stdout);
  const out = path.join(dir, `${history}-export`);
  const exported = await inferlab(['export', summary.run_id, '--out', out, '--db', db]);
  expect(exported.code, exported.stderr).toBe(0);
  const requests = fs
    .readFileSync(path.join(out, 'requests.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as ExportedRequest);
  const manifest = JSON.parse(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8'));
  return { summary, requests, manifest, stderr: run.stderr };
}

const byConversation = (requests: ExportedRequest[]) => {
  const conversations = new Map<number, ExportedRequest[]>();
  for (const request of requests) conversations.set(request.conversation!, [...(conversations.get(request.conversation!) ?? []), request]);
  return [...conversations.values()].map((turns) => turns.sort((a, b) => a.turn! - b.turn!));
};

describe('multi-turn conversations against the real server', () => {
  it("turn k sends turns 1..k−1 with the model's answers, and the server's cached tokens grow with k", async () => {
    const { summary, requests, manifest, stderr } = await runConversations(tempDir(), 'actual');
    // Two users, one conversation each, four turns each: every request succeeded.
    expect(requests).toHaveLength(8);
    expect(requests.every((request) => request.error_class === null)).toBe(true);
    // The demo profile has one slot; two users get one slot each.
    expect(stderr).toMatch(/parallel slots 1 → 2: one per concurrent user/);
    expect(manifest.server.effectiveConfig.slots).toBe(2);
    const conversations = byConversation(requests);
    expect(conversations).toHaveLength(2);
    for (const turns of conversations) {
      expect(turns.map((request) => request.turn)).toEqual([1, 2, 3, 4]);
      for (const [index, request] of turns.entries()) {
        const messages = JSON.parse(request.prompt) as { role: string; content: string }[];
        expect(messages[0]).toEqual({ role: 'system', content: 'You are a travel guide.' });
        // The history: every earlier user message followed by the answer the model actually gave.
        const expected = turns.slice(0, index).flatMap((earlier, k) => [
          { role: 'user', content: USERS[k] },
          { role: 'assistant', content: earlier.output },
        ]);
        expect(messages.slice(1, -1)).toEqual(expected);
        expect(messages.at(-1)).toEqual({ role: 'user', content: USERS[index] });
        if (index > 0) {
          // The server reused the conversation so far from its cache. Not always its own: both users send
          // the same messages, and llama-server gives a request the slot whose prompt is most like it, so a
          // turn may land in the other user's slot and reuse less than the turn before did.
          expect(request.cached_tokens!).toBeGreaterThan(0);
          expect(request.cached_tokens!).toBeLessThan(request.prompt_tokens!);
          expect(request.prompt_tokens!).toBeGreaterThan(turns[index - 1]!.prompt_tokens!);
          // The user thought for 150 ms after the previous answer before sending.
          expect(request.t0_ms - turns[index - 1]!.end_ms).toBeGreaterThanOrEqual(149);
        }
      }
    }
    expect(summary.turns.map((turn: { turn: number; requests: number }) => [turn.turn, turn.requests])).toEqual([
      [1, 2],
      [2, 2],
      [3, 2],
      [4, 2],
    ]);
    const cached = summary.turns.map((turn: { cached_tokens_mean: number }) => turn.cached_tokens_mean);
    // Over the conversation the reuse grows, whichever slot each turn landed in.
    expect(cached.at(-1)).toBeGreaterThan(cached[0]);
  }, 120_000);

  it('a reference history appends the fixed answers, not the model’s, so prompt lengths are reproducible', async () => {
    const { requests } = await runConversations(tempDir(), 'reference');
    for (const turns of byConversation(requests)) {
      const last = JSON.parse(turns.at(-1)!.prompt) as { role: string; content: string }[];
      expect(last.filter((message) => message.role === 'assistant').map((message) => message.content)).toEqual([
        'Fixed answer 1.',
        'Fixed answer 2.',
        'Fixed answer 3.',
      ]);
    }
    // Both conversations sent the same tokens turn by turn.
    const [first, second] = byConversation(requests);
    expect(first!.map((request) => request.prompt_tokens)).toEqual(second!.map((request) => request.prompt_tokens));
  }, 120_000);
});
