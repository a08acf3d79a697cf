import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/main/store/database';
import { ModelHashCache } from '../../src/main/store/model-hashes';
import { identifiedModel } from '../../src/main/runner/run-target';
import { Cancelled } from '../../src/main/core/errors';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();
const sha256 = (bytes: Buffer) => crypto.createHash('sha256').update(bytes).digest('hex');

/** A model-sized stand-in last changed well before it is hashed (a stamp needs a settled file). */
function settledModel(dir: string): { file: string; bytes: Buffer } {
  const file = path.join(dir, 'model.gguf');
  const bytes = crypto.randomBytes(64 * 1024);
  fs.writeFileSync(file, bytes);
  const past = new Date(Date.now() - 60_000);
  fs.utimesSync(file, past, past);
  return { file, bytes };
}

describe('model hashes shared by every database of a user', () => {
  it('a second database takes the digest from the stamps without reading the file; a changed file is read again', async () => {
    const dir = tempDir();
    const stamps = path.join(dir, 'cache', 'model-hashes.json');
    const { file, bytes } = settledModel(dir);
    // The file's status-change time is the write above: a stamp is kept only for a file settled a second before its hash.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const first = openDatabase(path.join(dir, 'a.db'));
    expect(await new ModelHashCache(first, stamps).hash(file)).toBe(sha256(bytes));
    first.close();

    // The stamp, not the bytes, answers a second database: a digest planted in it comes back as it is.
    const planted = 'f'.repeat(64);
    const recorded = JSON.parse(fs.readFileSync(stamps, 'utf8')) as Record<string, { sha256: string }>;
    expect(Object.keys(recorded)).toEqual([path.resolve(file)]);
    recorded[path.resolve(file)]!.sha256 = planted;
    fs.writeFileSync(stamps, JSON.stringify(recorded));
    const second = openDatabase(path.join(dir, 'b.db'));
    expect(await new ModelHashCache(second, stamps).hash(file)).toBe(planted);

    // A write changes the status-change time, so the stamp no longer vouches for the file.
    const changed = Buffer.from(bytes);
    changed[0] = changed[0]! ^ 0xff;
    fs.writeFileSync(file, changed);
    const third = openDatabase(path.join(dir, 'c.db'));
    expect(await new ModelHashCache(third, stamps).hash(file)).toBe(sha256(changed));
    second.close();
    third.close();
  });

  it("says so before a run reads a model file whole, never for one it remembers, and stops reading at the run's cancel", async () => {
    const dir = tempDir();
    const db = openDatabase(path.join(dir, 'runs.db'));
    const hashes = new ModelHashCache(db, path.join(dir, 'cache', 'model-hashes.json'));
    // Constructed: 16 MiB of random bytes, four of the reader's chunks.
    const file = path.join(dir, 'big.gguf');
    const bytes = crypto.randomBytes(16 * 2 ** 20);
    fs.writeFileSync(file, bytes);
    const said: string[] = [];
    const model = await identifiedModel('big.gguf', file, { hashes, onStatus: (line) => said.push(line) });
    expect(model).toEqual({ ref: 'big.gguf', path: file, size: bytes.length, sha256: sha256(bytes) });
    expect(said).toEqual(['identifying big.gguf by its SHA-256 (16 MiB, read once; remembered after)']);
    await identifiedModel('big.gguf', file, { hashes, onStatus: (line) => said.push(line) });
    expect(said).toHaveLength(1);

    // Cancelled as the reading begins: it stops there, the handle closed, nothing remembered.
    const other = path.join(dir, 'other.gguf');
    fs.writeFileSync(other, crypto.randomBytes(16 * 2 ** 20));
    const openFiles = () => fs.readdirSync('/proc/self/fd').length;
    const before = openFiles();
    const cancel = new AbortController();
    let chunksAfterCancel = 0;
    const reading = hashes.hash(
      other,
      () => {
        if (cancel.signal.aborted) chunksAfterCancel += 1;
        else cancel.abort();
      },
      cancel.signal,
    );
    await expect(reading).rejects.toBeInstanceOf(Cancelled);
    expect(chunksAfterCancel).toBe(0);
    await expect.poll(openFiles).toBe(before);
    expect(await hashes.cached(other)).toBeNull();
    // A signal already aborted reads nothing.
    await expect(hashes.hash(other, () => chunksAfterCancel++, AbortSignal.abort())).rejects.toBeInstanceOf(Cancelled);
    expect(chunksAfterCancel).toBe(0);
    db.close();
  });
});
