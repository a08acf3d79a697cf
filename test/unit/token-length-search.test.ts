import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/main/core/random';
import { mostWordsWithin } from '../../src/main/workload/token-length-search';

/** Constructed token counts: the prefix's, then each word adding `step()` tokens (never fewer than before). */
function constructedCounts(words: number, prefixTokens: number, step: () => number): number[] {
  const counts = [prefixTokens];
  for (let n = 1; n <= words; n++) counts.push(counts[n - 1]! + step());
  return counts;
}

/** The bisection the search replaces: the largest n with counts[n] ≤ budget, assuming n = 0 fits. */
function bisection(counts: number[], budget: number): { words: number; asked: number } {
  let asked = 0;
  let low = 0;
  let high = counts.length - 1;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    asked++;
    if (counts[middle]! <= budget) low = middle;
    else high = middle - 1;
  }
  return { words: low, asked };
}

/** Bisecting at least every fourth question bounds the search: four questions per halving of the pool, and two more. */
function questionsAtMost(poolSize: number): number {
  return 4 * Math.ceil(Math.log2(poolSize + 2)) + 2;
}

async function searched(counts: number[], budget: number) {
  let asked = 0;
  const found = await mostWordsWithin(budget, counts.length - 1, async (n) => (asked++, counts[n]!), counts[0]!);
  return { ...found, asked };
}

describe('mostWordsWithin', () => {
  it('answers as a bisection does for counts that never fall, with plateaus, jumps, prefixes and budgets out of reach', async () => {
    const random = seededRandom(41);
    for (let trial = 0; trial < 2_000; trial++) {
      const words = 1 + Math.floor(random() * 1_500);
      const prefixTokens = random() < 0.5 ? 0 : Math.floor(random() * 900);
      // Words of 0 to 4 tokens, with the odd 40-token word (a long number, say).
      const counts = constructedCounts(words, prefixTokens, () => (random() < 0.01 ? 40 : Math.floor(random() * 5)));
      const budget = Math.floor(random() * (counts[words]! + 200)) - 100;
      const found = await searched(counts, budget);
      expect(found.words, `trial ${trial}: ${words} words, prefix ${prefixTokens}, budget ${budget}`).toBe(bisection(counts, budget).words);
      expect(found.tokens).toBe(counts[found.words]);
      expect(found.asked).toBeLessThanOrEqual(questionsAtMost(words));
    }
  });

  it('stays within a bound of questions where interpolation is misled: free words, then one of 10,000 tokens', async () => {
    for (const words of [10, 100, 1_000, 10_000]) {
      for (const cliff of [1, Math.floor(words / 3), words - 1]) {
        const counts = Array.from({ length: words + 1 }, (_, n) => (n < cliff ? 5 : 10_005 + n));
        const found = await searched(counts, 6);
        expect(found.words).toBe(cliff - 1);
        expect(found.asked, `${words} words, cliff at ${cliff}`).toBeLessThanOrEqual(questionsAtMost(words));
      }
    }
  });

  it('asks the tokenizer far less often than a bisection where each word costs about the same', async () => {
    const random = seededRandom(7);
    let searchAsked = 0;
    let bisectionAsked = 0;
    const trials = 500;
    for (let trial = 0; trial < trials; trial++) {
      const target = 16 + Math.floor(random() * 4_000);
      const words = Math.ceil(target * 1.5) + 8;
      const prefixTokens = random() < 0.5 ? 0 : Math.floor(random() * 2_000);
      const counts = constructedCounts(words, prefixTokens, () => (random() < 0.7 ? 1 : random() < 0.8 ? 2 : 3));
      const budget = prefixTokens + target;
      searchAsked += (await searched(counts, budget)).asked;
      bisectionAsked += bisection(counts, budget).asked;
    }
    // Measured: 4.5 questions a search on average (at most 8) against about 12 for the bisection.
    expect(searchAsked / trials).toBeLessThan(6);
    expect(bisectionAsked / trials).toBeGreaterThan(10);
  });

  it('takes the whole pool when it fits, and no words when even the prefix is over the budget', async () => {
    const counts = constructedCounts(100, 10, () => 1);
    expect(await searched(counts, 500)).toMatchObject({ words: 100, tokens: 110 });
    expect(await searched(counts, 5)).toMatchObject({ words: 0, tokens: 10 });
    expect(await searched(counts, 10)).toMatchObject({ words: 0, tokens: 10 });
    expect(await searched(counts, 11)).toMatchObject({ words: 1, tokens: 11 });
  });
});
