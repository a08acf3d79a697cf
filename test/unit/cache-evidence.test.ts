import { describe, expect, it } from 'vitest';
import {
  cacheEvidence,
  classifyRequest,
  MIN_PREFIX_TOKENS,
  promptText,
  reusedTokens,
  sharedPrefixes,
  sharedPrefixTokens,
} from '../../src/main/experiments/cache-evidence';
import { contradiction } from '../../src/main/experiments/kinds/warmcold/protocol';
import { parsedTimings } from '../../src/main/store/run-rows';
import { spreadOverWindows } from '../../src/main/experiments/windows';

type Row = {
  cached_tokens: number | null;
  timings_json: string | null;
  item_id: string | null;
  warmup: number;
  error_class: string | null;
};
const row = (cached: number | null, cacheN: number | null = null, item = 'a', extra: Partial<Row> = {}): Row => ({
  cached_tokens: cached,
  timings_json: cacheN === null ? null : JSON.stringify({ prompt_n: 10, cache_n: cacheN }),
  item_id: item,
  warmup: 0,
  error_class: null,
  ...extra,
});

describe('reused tokens from the server evidence', () => {
  it('reads usage and timings, takes the larger when they disagree, and is null when neither was reported', () => {
    expect(reusedTokens(row(12))).toBe(12);
    expect(reusedTokens(row(null, 7))).toBe(7);
    expect(reusedTokens(row(0, 5))).toBe(5);
    expect(reusedTokens(row(null))).toBeNull();
    expect(reusedTokens({ cached_tokens: null, timings_json: '{"prompt_n": 3}' })).toBeNull();
    expect(reusedTokens({ cached_tokens: null, timings_json: 'not json' })).toBeNull();
  });
});

describe('stored timings', () => {
  it('reads the stored object and is null for none, unreadable or non-object timings', () => {
    expect(parsedTimings({ timings_json: '{"cache_n": 4, "draft_n": 2}' })).toEqual({ cache_n: 4, draft_n: 2 });
    expect(parsedTimings({ timings_json: null })).toBeNull();
    expect(parsedTimings({ timings_json: '' })).toBeNull();
    expect(parsedTimings({ timings_json: '{"cache_n": ' })).toBeNull();
    expect(parsedTimings({ timings_json: 'null' })).toBeNull();
    expect(parsedTimings({ timings_json: '7' })).toBeNull();
  });
});

describe('per-request classification', () => {
  it('no reuse: zero confirms, any reused token contradicts, silence is unknown (never 0)', () => {
    const none = { kind: 'none' } as const;
    expect(classifyRequest(row(0, 0), none)).toBe('confirmed');
    expect(classifyRequest(row(0), none)).toBe('confirmed');
    expect(classifyRequest(row(3), none)).toBe('contradicted');
    expect(classifyRequest(row(null, null), none)).toBe('unknown');
  });

  it("prefix reuse: at least 95 % of the item's shared prefix; the chat template alone does not count", () => {
    const prefix = {
      kind: 'prefix',
      prefixTokens: new Map<string, number | null>([
        ['a', 768],
        ['b', null],
      ]),
    } as const;
    expect(classifyRequest(row(730), prefix)).toBe('confirmed');
    expect(classifyRequest(row(729), prefix)).toBe('contradicted');
    // A few template tokens reused: what the old "any cached token" rule accepted as warm.
    expect(classifyRequest(row(4), prefix)).toBe('contradicted');
    expect(classifyRequest(row(null), prefix)).toBe('unknown');
    expect(classifyRequest(row(800, null, 'b'), prefix)).toBe('unknown');
    expect(classifyRequest(row(800, null, 'not-in-workload'), prefix)).toBe('unknown');
  });

  it('counts only measured, successful requests and reads as a sentence', () => {
    const rows = [row(0), row(0, 0), row(null), row(64), row(500, null, 'a', { warmup: 1 }), row(9, null, 'a', { error_class: 'timeout' })];
    const evidence = cacheEvidence(rows, { kind: 'none' });
    expect(evidence).toMatchObject({ expect: 'no reuse', measured: 4, confirmed: 2, contradicted: 1, unknown: 1 });
    expect(evidence.summary).toBe(
      '2 of 4 requests reused no cached prompt tokens; 1 reused some (up to 64 tokens); 1 unknown (no cache count from the server)',
    );
    const warm = cacheEvidence([row(760), row(770), row(5)], { kind: 'prefix', prefixTokens: new Map([['a', 768]]) });
    expect(warm.summary).toBe('2 of 3 requests reused ≥ 95 % of their shared prefix; 1 reused less');
    expect(warm.rule).toMatch(/95 %/);
  });

  it('a condition is contaminated when any measured request contradicts it, not when evidence is missing', () => {
    const silent = cacheEvidence([row(null), row(null)], { kind: 'none' });
    expect(silent.unknown).toBe(2);
    expect(contradiction('cold-cache', silent)).toBeNull();
    expect(contradiction('cold-cache', cacheEvidence([row(0), row(40)], { kind: 'none' }))).toMatch(
      /1 of 2 requests reused cached prompt tokens: the cache was not cold/,
    );
    expect(contradiction('warm-cache', cacheEvidence([row(3)], { kind: 'prefix', prefixTokens: new Map([['a', 768]]) }))).toMatch(
      /the cache was not warm/,
    );
    const late = {
      starts: [{ run_id: 'r', spawn_to_ready_ms: 1, ttft_ms: 1, cached_tokens: 0, requests_before: 1 }],
      spawn_to_ready_ms: {} as never,
      ttft_ms: {} as never,
    };
    expect(contradiction('cold-process', cacheEvidence([row(0)], { kind: 'none' }), late)).toMatch(
      /not the first their fresh server answered/,
    );
  });
});

describe('shared prefixes', () => {
  const doc = (family: number) => `Document ${family}. ${'river stone '.repeat(40)}`;
  const items = [0, 1].flatMap((family) =>
    [0, 1, 2].map((suffix) => ({ id: `p${family}-s${suffix}`, text: `${doc(family)}\nQuestion ${suffix}: what ${suffix}` })),
  );

  it('finds, per item, the longest text it shares with another item, cut at a word boundary', () => {
    const prefixes = sharedPrefixes([...items, { id: 'lone', text: 'Something else entirely' }]);
    expect(prefixes.get('p0-s0')).toBe(`${doc(0)}\nQuestion`);
    expect(prefixes.get('p1-s2')).toBe(`${doc(1)}\nQuestion`);
    // "Document 0." and "Document 1." share only "Document ": the lone item shares nothing.
    expect(prefixes.get('lone')).toBe('');
  });

  it('counts prefixes with the engine tokenizer and drops those too short to tell from the chat template', async () => {
    const counted: string[] = [];
    const counter = { exact: true, count: async (text: string) => (counted.push(text), text.split(/\s+/).filter(Boolean).length) };
    const tokens = await sharedPrefixTokens(
      [...items, { id: 'x', text: 'short shared one' }, { id: 'y', text: 'short shared two' }],
      counter,
    );
    expect(tokens.get('p0-s1')).toBe(2 + 80 + 1);
    expect(tokens.get('x')).toBeNull();
    expect(MIN_PREFIX_TOKENS).toBeGreaterThan(2);
    // One tokenizer call per distinct prefix, not per item.
    expect(counted.length).toBe(3);
  });

  it('reads chat messages in order, and raw prompts as they are', () => {
    expect(
      promptText({
        messages: [
          { role: 'system', content: 'S' },
          { role: 'user', content: 'U' },
        ],
        prompt: null,
      }),
    ).toBe('S\nU');
    expect(promptText({ messages: null, prompt: 'P' })).toBe('P');
  });
});

describe('cold starts over windows', () => {
  it('spreads the starts as evenly as possible', () => {
    expect(spreadOverWindows(8, 3)).toEqual([3, 3, 2]);
    expect(spreadOverWindows(3, 3)).toEqual([1, 1, 1]);
    expect(spreadOverWindows(8, 2)).toEqual([4, 4]);
  });
});
