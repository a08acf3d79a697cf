import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LiveRaceRequest } from '../../src/shared/contract';
import { shellAccess } from '../../src/main/services/access';
import { racedItem } from '../../src/main/services/race-item';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();
const access = shellAccess();
const raceOf = (workload: string, id: string): LiveRaceRequest => ({
  lanes: [{ model: 'demo:q8_0' }, { model: 'demo:q4_k_m' }],
  item: { workload, id },
  maxTokens: 16,
  together: false,
});
const wordsOf = (item: { messages?: { content: unknown }[] }) => String(item.messages![0]!.content).split(' ').length;

describe("a race's item", () => {
  it('takes a generated item of a built-in workload: the same words every time, sized by the word estimate', async () => {
    const first = await racedItem(raceOf('prefill-heavy', 'prefill-3'), access);
    const again = await racedItem(raceOf('prefill-heavy', 'prefill-3'), access);
    const other = await racedItem(raceOf('prefill-heavy', 'prefill-4'), access);
    expect(first.id).toBe('prompt');
    expect(first.messages).toEqual(again.messages);
    expect(other.messages).not.toEqual(first.messages);
    // 2,048 tokens at the estimate's 0.75 words a token.
    expect(wordsOf(first)).toBe(1536);
    // The race's own answer length, not the generator's.
    expect(first.max_tokens).toBeUndefined();
    const families = await racedItem(raceOf('prefix-share', 'shared-prefix-p1-s2'), access);
    expect(wordsOf(families)).toBeGreaterThan(10);
  });

  it('names the written and generated items where the one asked for is not there', async () => {
    await expect(racedItem(raceOf('prefill-heavy', 'prefill-8'), access)).rejects.toThrow(
      /prefill-heavy\.yaml has no item "prefill-8"; its written items are none; the ones it generates are prefill-0 … prefill-7 \(8\)$/,
    );
  });

  it('refuses a generated conversation, embeddings request or trace request, before generating it', async () => {
    await expect(racedItem(raceOf('multi-turn-chat', 'chat-c1'), access)).rejects.toThrow(
      /item: chat-c1 of .*multi-turn-chat\.yaml is a conversation \(the conversations generator\); a race streams one answer to one request/,
    );
    await expect(racedItem(raceOf('embeddings', 'batch-4-0'), access)).rejects.toThrow(/is an embeddings request/);
    await expect(racedItem(raceOf('trace-sample', 'trace-0'), access)).rejects.toThrow(/is a timed request of a trace replay/);
  });

  it('refuses a group too large to generate for one item, naming it and what to do', async () => {
    const file = path.join(tempDir(), 'huge.yaml');
    fs.writeFileSync(
      file,
      'name: huge\ngroups:\n  - name: big\n    generate:\n      synthetic: { count: 1000, input_tokens: 4096, output_tokens: 8 }\n',
    );
    await expect(racedItem(raceOf(file, 'big-0'), access)).rejects.toThrow(
      /item: group big of .*huge\.yaml generates 4,096,000 prompt tokens, and a race generates at most 1,000,000 to find one of its items: race an item of a smaller group, or write the prompt \(--prompt\)/,
    );
  });
});
