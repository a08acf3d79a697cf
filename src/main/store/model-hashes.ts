import fs from 'node:fs';
import { sha256File } from '../core/hash';
import type { Db } from './database';

/**
 * sha256 of model files, computed only when asked for and remembered by path, size and
 * modification time: a 10 GB model is hashed once, not on every run.
 */
export class ModelHashCache {
  constructor(private readonly db: Db) {}

  async cached(file: string): Promise<string | null> {
    return this.lookup(file, await fs.promises.stat(file));
  }

  private lookup(file: string, stat: fs.Stats): string | null {
    const row = this.db
      .prepare('SELECT sha256 FROM model_hashes WHERE path = ? AND size = ? AND mtime_ms = ?')
      .get(file, stat.size, stat.mtimeMs) as { sha256: string } | undefined;
    return row?.sha256 ?? null;
  }

  async hash(file: string, onProgress?: (bytesDone: number, bytesTotal: number) => void): Promise<string> {
    const stat = await fs.promises.stat(file);
    const known = this.lookup(file, stat);
    if (known) return known;
    let done = 0;
    const digest = await sha256File(file, (bytes) => {
      done += bytes;
      onProgress?.(done, stat.size);
    });
    this.db
      .prepare('INSERT OR REPLACE INTO model_hashes (path, size, mtime_ms, sha256, hashed_at) VALUES (?, ?, ?, ?, ?)')
      .run(file, stat.size, stat.mtimeMs, digest, new Date().toISOString());
    return digest;
  }
}
