import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { readWorkloadFile, workloadPath } from '../../src/main/workload/parse-workload';
import { resolveWorkload } from '../../src/main/workload/resolve-workload';
import {
  REMEMBERED_COUNTS_MAX,
  rememberingTokenCounter,
  tokenizerIdentity,
  type TokenCounter,
} from '../../src/main/workload/token-counter';

/** A constructed tokenizer (one token per 4 characters, rounded up) that counts the questions it is asked. */
function askedCounter(): TokenCounter & { asked: string[] } {
  const asked: string[] = [];
  return { exact: true, asked, count: async (text) => (asked.push(text), Math.ceil(text.length / 4)) };
}

// Every test names a tokenizer of its own: the counts are remembered for the whole process.
const freshTokenizer = () => `constructed tokenizer ${crypto.randomUUID()}`;

describe('rememberingTokenCounter', () => {
  it('asks once per text and tokenizer, and asks again for the same text under another tokenizer', async () => {
    const inner = askedCounter();
    const [first, second] = [freshTokenizer(), freshTokenizer()];
    const remembering = rememberingTokenCounter(inner, first);
    expect(await remembering.count('twelve chars')).toBe(3);
    expect(await rememberingTokenCounter(inner, first).count('twelve chars')).toBe(3);
    expect(inner.asked).toEqual(['twelve chars']);
    expect(await rememberingTokenCounter(inner, second).count('twelve chars')).toBe(3);
    expect(inner.asked).toHaveLength(2);
    // A tokenizer's name running into the text must not meet another pair's key.
    await rememberingTokenCounter(inner, `${first}x`).count('y');
    await rememberingTokenCounter(inner, first).count('xy');
    expect(inner.asked).toHaveLength(4);
  });

  it('keeps the newest counts when full, so the oldest text is asked again', async () => {
    const inner = askedCounter();
    const remembering = rememberingTokenCounter(inner, freshTokenizer());
    for (let index = 0; index <= REMEMBERED_COUNTS_MAX; index++) await remembering.count(`text ${index}`);
    expect(inner.asked).toHaveLength(REMEMBERED_COUNTS_MAX + 1);
    await remembering.count(`text ${REMEMBERED_COUNTS_MAX}`);
    expect(inner.asked).toHaveLength(REMEMBERED_COUNTS_MAX + 1);
    await remembering.count('text 0');
    expect(inner.asked).toHaveLength(REMEMBERED_COUNTS_MAX + 2);
  });

  it('resolves a generated workload a second time without asking the tokenizer, to the same revision', async () => {
    const file = await workloadPath('prefix-share');
    const def = await readWorkloadFile(file);
    const inner = askedCounter();
    const tokenizer = freshTokenizer();
    const first = await resolveWorkload(def, file, rememberingTokenCounter(inner, tokenizer));
    const askedFirst = inner.asked.length;
    expect(askedFirst).toBeGreaterThan(0);
    const again = await resolveWorkload(def, file, rememberingTokenCounter(inner, tokenizer));
    expect(inner.asked).toHaveLength(askedFirst);
    expect(again.revision).toBe(first.revision);
    expect(again.groups).toEqual(first.groups);
  });
});

describe('tokenizerIdentity', () => {
  it('differs when the engine build, the model file or the launch flags differ, and only then', () => {
    const engine = { serverPath: '/engine/llama-server', version: 'version: 1 (80fb11a)', commit: '80fb11a' };
    const base = { engine, modelSha256: 'a'.repeat(64), extraFlags: ['--mlock'] };
    const changed = [
      { ...base, engine: { ...engine, serverPath: '/other/llama-server' } },
      { ...base, engine: { ...engine, version: 'version: 2 (1234567)' } },
      { ...base, engine: { ...engine, commit: '1234567' } },
      { ...base, modelSha256: 'b'.repeat(64) },
      { ...base, extraFlags: ['--override-kv', 'tokenizer.ggml.add_bos_token=bool:false'] },
      { ...base, extraFlags: [] },
    ].map(tokenizerIdentity);
    expect(new Set([tokenizerIdentity(base), ...changed]).size).toBe(changed.length + 1);
    expect(tokenizerIdentity({ ...base, engine: { ...engine }, extraFlags: ['--mlock'] })).toBe(tokenizerIdentity(base));
  });
});
