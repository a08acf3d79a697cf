import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { keptReading, type KeptReadingOptions } from '../../src/main/core/kept-reading';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

const isCount = (value: unknown): value is { count: number } =>
  typeof value === 'object' && value !== null && typeof (value as { count?: unknown }).count === 'number';

/** A reading that counts how often it was taken, kept in `file` under `key` for a minute. */
function counted(file: string, overrides: Partial<KeptReadingOptions<{ count: number }>> = {}) {
  let taken = 0;
  const options: KeptReadingOptions<{ count: number }> = {
    file,
    key: 'boot-1 kernel-6 x64',
    keepMs: 60_000,
    maxBytes: 4096,
    isValue: isCount,
    read: async () => ({ count: ++taken }),
    now: () => 1_000_000,
    ...overrides,
  };
  return { read: () => keptReading(options), taken: () => taken };
}

describe('a reading kept between processes', () => {
  it('is read once and then served from the file until it is older than its keep', async () => {
    const file = path.join(tempDir(), 'cache', 'inventory.json');
    expect(await counted(file).read()).toEqual({ count: 1 });
    // A second process within the minute: the kept reading, nothing taken.
    const later = counted(file, { now: () => 1_000_000 + 59_000 });
    expect(await later.read()).toEqual({ count: 1 });
    expect(later.taken()).toBe(0);
    // Past the minute: taken again.
    const stale = counted(file, { now: () => 1_000_000 + 61_000 });
    expect(await stale.read()).toEqual({ count: 1 });
    expect(stale.taken()).toBe(1);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  });

  it('is taken again under another key, and keeps both, or when the entry says it was read in the future', async () => {
    const file = path.join(tempDir(), 'inventory.json');
    await counted(file).read();
    const otherTools = counted(file, { key: 'boot-1 kernel-6 x64 other-PATH' });
    await otherTools.read();
    expect(otherTools.taken()).toBe(1);
    // Callers that alternate between two keys (two PATHs) each find their own.
    for (const key of ['boot-1 kernel-6 x64', 'boot-1 kernel-6 x64 other-PATH']) {
      const again = counted(file, { key });
      await again.read();
      expect(again.taken(), key).toBe(0);
    }
    // A clock set back: a reading "from the future" proves nothing about now.
    const earlier = counted(file, { now: () => 1_000_000 - 5_000 });
    await earlier.read();
    expect(earlier.taken()).toBe(1);
  });

  it('keeps a few keys, the newest', async () => {
    const file = path.join(tempDir(), 'inventory.json');
    for (let index = 0; index < 12; index++) await counted(file, { key: `key-${index}`, now: () => 1_000_000 + index }).read();
    const kept = JSON.parse(fs.readFileSync(file, 'utf8')) as { key: string }[];
    expect(kept.map((entry) => entry.key)).toEqual(['key-11', 'key-10', 'key-9', 'key-8', 'key-7', 'key-6', 'key-5', 'key-4']);
  });

  it('passes over a file it cannot trust, without failing or waiting, and takes the reading', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'inventory.json');
    const key = 'boot-1 kernel-6 x64';
    const planted: [string, () => void][] = [
      ['not JSON', () => fs.writeFileSync(file, '{"key": "boot-1')],
      ['JSON of another shape', () => fs.writeFileSync(file, JSON.stringify({ key, read_at: 1_000_000, value: { count: 7 } }))],
      ['entries of another shape', () => fs.writeFileSync(file, JSON.stringify([null, 'boot-1', [key, 1_000_000]]))],
      ['a value of the wrong shape', () => fs.writeFileSync(file, JSON.stringify([{ key, read_at: 1_000_000, value: { count: 'many' } }]))],
      ['a read time that is no number', () => fs.writeFileSync(file, JSON.stringify([{ key, read_at: '1000000', value: { count: 7 } }]))],
      [
        'a file past the size cap',
        () => fs.writeFileSync(file, JSON.stringify([{ key, read_at: 1_000_000, value: { count: 7, pad: 'x'.repeat(8192) } }])),
      ],
      // A FIFO no one writes to: opening it for reading must not hang the run.
      ['a FIFO', () => execFileSync('mkfifo', [file])],
      ['a folder', () => fs.mkdirSync(file)],
    ];
    for (const [what, plant] of planted) {
      fs.rmSync(file, { recursive: true, force: true });
      plant();
      const reading = counted(file);
      expect(await reading.read(), what).toEqual({ count: 1 });
      expect(reading.taken(), what).toBe(1);
    }
  });

  it('still answers when the file cannot be written', async () => {
    const dir = tempDir();
    // The cache folder's place holds a file: nothing can be written under it.
    fs.writeFileSync(path.join(dir, 'cache'), '');
    const reading = counted(path.join(dir, 'cache', 'inventory.json'));
    expect(await reading.read()).toEqual({ count: 1 });
    expect(fs.readdirSync(dir)).toEqual(['cache']);
  });
});
