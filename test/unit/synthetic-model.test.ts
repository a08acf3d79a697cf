import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { gaussian, seededRandom } from '../../src/main/core/random';
import {
  buildSuccessorMap,
  demoModelTextFile,
  normalizeDemoText,
  successorCycle,
  tokenizeSpm,
  type SpmVocabulary,
} from '../../src/main/models/synthetic-model';

/** A toy SentencePiece vocabulary: byte tokens for the newline, single letters, and a few scored merges. */
function toyVocabulary(): SpmVocabulary {
  const entries: [string, number][] = [
    ['<unk>', 0],
    ['<s>', 0],
    ['</s>', 0],
    ['<0x0A>', 0],
    ['▁', -1],
    ['a', -1],
    ['b', -1],
    ['c', -1],
    ['d', -1],
    ['t', -1],
    ['h', -1],
    ['e', -1],
    ['ab', -5],
    ['bc', -2],
    ['▁a', -3],
    ['▁abc', -4],
    ['▁t', -3],
    ['he', -2],
    ['▁the', -1],
  ];
  return { tokens: entries.map(([token]) => token), scores: entries.map(([, score]) => score) };
}

function walk(successor: Map<number, number>, start: number, steps: number): number[] {
  const path = [start];
  for (let i = 1; i < steps; i++) path.push(successor.get(path[i - 1]!)!);
  return path;
}

describe('SentencePiece tokenization', () => {
  it('merges the best-scoring pair first, prefixes a space, and falls back to bytes', () => {
    const vocabulary = toyVocabulary();
    const text = (ids: number[]) => ids.map((id) => vocabulary.tokens[id]).join('|');
    // "bc" (-2) before "▁a" (-3) before "ab" (-5): the path that reaches "▁abc". Merging "ab"
    // first would have stranded "▁|ab|c".
    expect(text(tokenizeSpm('abc', vocabulary))).toBe('▁abc');
    expect(text(tokenizeSpm('the', vocabulary))).toBe('▁the');
    expect(text(tokenizeSpm('the dab\nthe', vocabulary))).toBe('▁the|▁|d|ab|<0x0A>|t|he');
  });

  it('refuses a character with no byte token rather than dropping it', () => {
    expect(() => tokenizeSpm('x', toyVocabulary())).toThrow(/no byte token for 0x78/);
  });
});

describe('successor cycle', () => {
  it('follows the text where it can and chains everything into one cycle', () => {
    const sequence = [1, 2, 3, 1, 4, 5, 2, 6];
    const successor = successorCycle(sequence);
    expect(successor.get(1)).toBe(2);
    expect(successor.get(2)).toBe(3);
    // 3 → 1 would close the loop 1 → 2 → 3 → 1 and leave 4, 5, 6 out.
    expect(successor.get(4)).toBe(5);
    const distinct = new Set(sequence);
    expect(new Set(walk(successor, 1, distinct.size))).toEqual(distinct);
    expect(successor.get(walk(successor, 1, distinct.size).at(-1)!)).toBe(1);
  });

  it('never maps a token to itself, even when the text repeats it', () => {
    const successor = successorCycle([7, 7, 7, 8, 8, 9]);
    for (const [from, to] of successor) expect(to).not.toBe(from);
    expect(new Set(walk(successor, 7, 3))).toEqual(new Set([7, 8, 9]));
  });
});

describe('demo text', () => {
  it('does not depend on line endings or wrapping', () => {
    expect(normalizeDemoText('One  two\r\nthree.\r\n\r\nFour\n')).toBe('One two three.\nFour');
    expect(normalizeDemoText('One two\nthree.\n\n\nFour')).toBe('One two three.\nFour');
  });

  it('ships a text long enough for a long successor cycle', () => {
    const words = normalizeDemoText(fs.readFileSync(demoModelTextFile(), 'utf8')).split(/\s+/);
    expect(words.length).toBeGreaterThan(300);
    const vocabulary = toyVocabulary();
    const map = buildSuccessorMap('the abc the dab', vocabulary);
    expect(map.predecessors.get(map.sequence[1]!)).toEqual(new Set([map.sequence[0]]));
  });
});

describe('seeded normal samples', () => {
  it('have mean 0 and variance 1, and repeat for the same seed', () => {
    const normal = gaussian(seededRandom(3));
    const values = Array.from({ length: 20_000 }, normal);
    const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
    const variance = values.reduce((sum, value) => sum + (value - mean) ** 2, 0) / values.length;
    expect(Math.abs(mean)).toBeLessThan(0.03);
    expect(Math.abs(variance - 1)).toBeLessThan(0.05);
    const again = gaussian(seededRandom(3));
    expect(Array.from({ length: 5 }, again)).toEqual(values.slice(0, 5));
  });
});
