import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { blockTokenIds, promptTokenIds, readTrace, tokenRangeFor, traceWindow } from '../../src/main/workload/trace';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

function traceFile(lines: string[]): string {
  const file = path.join(tempDir(), 't.jsonl');
  fs.writeFileSync(file, lines.join('\n'));
  return file;
}

const line = (fields: Record<string, unknown>) =>
  JSON.stringify({ timestamp: 0, input_length: 10, output_length: 4, hash_ids: [7], ...fields });

describe('trace files', () => {
  it.each([
    ['not JSON', '{oops', /t\.jsonl:2: not JSON/],
    ['a negative timestamp', line({ timestamp: -1 }), /t\.jsonl:2: timestamp must be a number of ms ≥ 0/],
    ['a zero input length', line({ input_length: 0 }), /t\.jsonl:2: input_length must be a whole number from 1/],
    ['a fractional output length', line({ output_length: 2.5 }), /t\.jsonl:2: output_length must be a whole number ≥ 1/],
    ['hash ids that are not numbers', line({ hash_ids: ['a'] }), /t\.jsonl:2: hash_ids must be a list of whole numbers/],
    [
      'too few hash ids for the length',
      line({ input_length: 1025, hash_ids: [1, 2] }),
      /needs 3 block\(s\) of 512 tokens, but hash_ids has 2/,
    ],
    ['time going backwards', line({ timestamp: 0 }), /timestamps must not go back in time \(0 after 5\)/],
  ])('names the line of %s', async (_name, bad, message) => {
    await expect(readTrace(traceFile([line({ timestamp: 5 }), bad]))).rejects.toThrow(message);
  });

  it('reads blank-line-separated records and takes another block size', async () => {
    const records = await readTrace(
      traceFile([line({ input_length: 100, hash_ids: [1, 2] }), '', line({ timestamp: 9, hash_ids: [3] })]),
      64,
    );
    expect(records.map((record) => record.hash_ids)).toEqual([[1, 2], [3]]);
    await expect(readTrace(traceFile(['', ' ']))).rejects.toThrow(/has no requests/);
  });

  it('windows by seconds from the first request and divides arrival gaps by the speed', () => {
    const records = [0, 1000, 2500, 4000].map((timestamp) => ({ timestamp, input_length: 1, output_length: 1, hash_ids: [0] }));
    expect(traceWindow(records, { speed: 2 }).map((entry) => entry.arrivalMs)).toEqual([0, 500, 1250, 2000]);
    // [1 s, 4 s): the second and third, timed from the second.
    expect(traceWindow(records, { startS: 1, endS: 4 }).map((entry) => [entry.record.timestamp, entry.arrivalMs])).toEqual([
      [1000, 0],
      [2500, 1500],
    ]);
    expect(traceWindow(records, { startS: 10 })).toEqual([]);
  });

  it('makes prompts of exactly the input length whose equal hash ids are equal token blocks', () => {
    const range = tokenRangeFor(32_000);
    const a = promptTokenIds({ hash_ids: [1, 2, 3], input_length: 1100 }, 512, range);
    const b = promptTokenIds({ hash_ids: [1, 2, 9], input_length: 1030 }, 512, range);
    expect(a).toHaveLength(1100);
    expect(b).toHaveLength(1030);
    expect(b.slice(0, 1024)).toEqual(a.slice(0, 1024));
    expect(b.slice(1024)).not.toEqual(a.slice(1024, 1030));
    expect(blockTokenIds(1, 512, range)).not.toEqual(blockTokenIds(2, 512, range));
    for (const id of a) {
      expect(id).toBeGreaterThanOrEqual(range.low);
      expect(id).toBeLessThan(range.high);
    }
  });

  it('keeps token ids clear of the special tokens at both ends of the vocabulary', () => {
    expect(tokenRangeFor(32_000)).toEqual({ low: 1000, high: 30_000 });
    expect(tokenRangeFor(151_936)).toEqual({ low: 1000, high: 30_000 });
    expect(tokenRangeFor(4_000)).toEqual({ low: 400, high: 3_744 });
    expect(tokenRangeFor(null)).toEqual(tokenRangeFor(32_000));
  });
});
