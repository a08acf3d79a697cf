import { describe, expect, it } from 'vitest';
import { reusedReading } from '../../src/main/core/reused-reading';

describe('a reading reused for a span of time', () => {
  it('shares one reading within the span, an unfinished one included, and reads again after it', async () => {
    let reads = 0;
    let finish: (value: number) => void = () => {};
    const read = reusedReading(1000, () => new Promise<number>((resolve) => ((finish = resolve), (reads += 1))));
    const first = read(10_000);
    const second = read(10_500);
    finish(1);
    expect(await Promise.all([first, second])).toEqual([1, 1]);
    expect(await read(11_000)).toBe(1);
    expect(reads).toBe(1);

    const later = read(11_001);
    finish(2);
    expect(await later).toBe(2);
    expect(reads).toBe(2);
    // A clock set back is not "within the span": the reading is taken again.
    const earlier = read(5_000);
    finish(3);
    expect(await earlier).toBe(3);
  });

  it('keeps no failed reading: the next caller reads again', async () => {
    let reads = 0;
    const read = reusedReading(60_000, async () => {
      reads += 1;
      if (reads === 1) throw new Error('nvidia-smi hung');
      return 'ok';
    });
    await expect(read(1)).rejects.toThrow('nvidia-smi hung');
    expect(await read(2)).toBe('ok');
    expect(await read(3)).toBe('ok');
    expect(reads).toBe(2);
  });
});
