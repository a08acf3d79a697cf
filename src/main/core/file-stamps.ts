import fs from 'node:fs';
import path from 'node:path';
import { ensurePrivateDir, PRIVATE_FILE_MODE } from './private-files';

/**
 * sha256 digests remembered by what any write to a file changes: the inode, size, modification and
 * status-change times. Hashing a model reads it whole (0.2–0.6 s for a demo model, minutes for a
 * large one), and a file whose stamp still matches has not been written since it was hashed.
 *
 * The status-change time cannot be set from user space, and every write, truncation, rename over or
 * new link updates it. One gap remains: the kernel stamps times at a coarse tick, so a write in the
 * same tick as the stamp read would leave it unchanged. A stamp is therefore kept only for a file
 * last changed well before its hash began.
 */
const SETTLED_MS = 1000;

interface Stamp {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  sha256: string;
}

const stampOf = (stat: fs.Stats, sha256: string): Stamp => ({
  dev: stat.dev,
  ino: stat.ino,
  size: stat.size,
  mtimeMs: stat.mtimeMs,
  ctimeMs: stat.ctimeMs,
  sha256,
});

const sameFile = (a: Stamp, b: Stamp) =>
  a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs;

function readStamps(stampsFile: string): Record<string, Stamp> {
  try {
    const stamps = JSON.parse(fs.readFileSync(stampsFile, 'utf8')) as unknown;
    return stamps && typeof stamps === 'object' && !Array.isArray(stamps) ? (stamps as Record<string, Stamp>) : {};
  } catch {
    // Missing or unreadable: every file is hashed again, which is only slower.
    return {};
  }
}

/** The sha256 stamped for `key` in `stampsFile` when the file (as `stat` finds it now) has not changed since; null otherwise. */
export function stampedDigest(stampsFile: string, key: string, stat: fs.Stats): string | null {
  const stamp = readStamps(stampsFile)[key];
  if (!stamp || typeof stamp !== 'object' || typeof stamp.sha256 !== 'string') return null;
  return sameFile(stamp, stampOf(stat, stamp.sha256)) ? stamp.sha256 : null;
}

/**
 * Stamps `file` (stat'ed as `before` and hashed from `hashStartedAt` on) as having `sha256`, under
 * `key`: only when it was last changed a second before the hash began and is unchanged after it.
 * The file keeps the `maxEntries` most recently stamped keys.
 */
export function rememberDigest(
  stampsFile: string,
  key: string,
  file: string,
  before: fs.Stats,
  sha256: string,
  hashStartedAt: number,
  maxEntries = 512,
): void {
  const after = fs.statSync(file, { throwIfNoEntry: false });
  if (!after || before.ctimeMs > hashStartedAt - SETTLED_MS || !sameFile(stampOf(before, sha256), stampOf(after, sha256))) return;
  const stamps = readStamps(stampsFile);
  delete stamps[key];
  stamps[key] = stampOf(after, sha256);
  const keys = Object.keys(stamps);
  for (const stale of keys.slice(0, Math.max(0, keys.length - maxEntries))) delete stamps[stale];
  // Renamed into place: a stamps file may be linked into another folder (a test's data folder), and
  // an in-place write would change the other folder's copy too.
  const partial = `${stampsFile}.${process.pid}.partial`;
  try {
    ensurePrivateDir(path.dirname(stampsFile));
    fs.writeFileSync(partial, JSON.stringify(stamps, null, 2), { mode: PRIVATE_FILE_MODE });
    fs.renameSync(partial, stampsFile);
  } catch {
    // A read-only folder still works; its files are hashed every time.
    fs.rmSync(partial, { force: true });
  }
}
