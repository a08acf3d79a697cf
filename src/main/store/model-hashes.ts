import fs from 'node:fs';
import path from 'node:path';
import { rememberDigest, stampedDigest } from '../core/file-stamps';
import { sha256File } from '../core/hash';
import { userCacheDir } from '../core/paths';
import type { Db } from './database';

/**
 * sha256 of model files, computed only when asked for and remembered twice: in this database by
 * path, size and modification time, and for every database of this user in a stamps file of the
 * user's cache (core/file-stamps), so a model is hashed once, not once per database (a test's, a
 * project's, one passed with --db).
 */
export class ModelHashCache {
  constructor(
    private readonly db: Db,
    private readonly stampsFile: string = path.join(userCacheDir(), 'model-hashes.json'),
  ) {}

  async cached(file: string): Promise<string | null> {
    return this.lookup(file, await fs.promises.stat(file));
  }

  private lookup(file: string, stat: fs.Stats): string | null {
    const row = this.db
      .prepare('SELECT sha256 FROM model_hashes WHERE path = ? AND size = ? AND mtime_ms = ?')
      .get(file, stat.size, stat.mtimeMs) as { sha256: string } | undefined;
    return row?.sha256 ?? null;
  }

  private store(file: string, stat: fs.Stats, digest: string): void {
    this.db
      .prepare('INSERT OR REPLACE INTO model_hashes (path, size, mtime_ms, sha256, hashed_at) VALUES (?, ?, ?, ?, ?)')
      .run(file, stat.size, stat.mtimeMs, digest, new Date().toISOString());
  }

  /**
   * The file's sha256: remembered, else read whole. `onProgress` hears only a file that is read
   * (a remembered one answers at once), so its first call is the moment to say the wait has begun.
   */
  async hash(file: string, onProgress?: (bytesDone: number, bytesTotal: number) => void, signal?: AbortSignal): Promise<string> {
    const stat = await fs.promises.stat(file);
    const known = this.lookup(file, stat);
    if (known) return known;
    const key = path.resolve(file);
    const stamped = stampedDigest(this.stampsFile, key, stat);
    if (stamped) {
      this.store(file, stat, stamped);
      return stamped;
    }
    const hashStartedAt = Date.now();
    let done = 0;
    const digest = await sha256File(
      file,
      (bytes) => {
        done += bytes;
        onProgress?.(done, stat.size);
      },
      signal,
    );
    this.store(file, stat, digest);
    rememberDigest(this.stampsFile, key, file, stat, digest, hashStartedAt);
    return digest;
  }
}
