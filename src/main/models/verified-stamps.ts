import fs from 'node:fs';
import path from 'node:path';

/**
 * Files already checked against their sha256, remembered by what any write to them changes:
 * the inode, size, modification and status-change times. A demo model is read whole on every
 * server start otherwise (0.2–0.6 s each; an experiment starts one per condition, the
 * cold-process condition one per request group).
 *
 * The status-change time cannot be set from user space, and every write, truncation, rename
 * over or new link updates it, so a file whose stamp still matches has not been written since it
 * was hashed. One gap remains: the kernel stamps times at a coarse tick, so a write in the same
 * tick as the stamp read would leave it unchanged. A stamp is therefore kept only for a file last
 * changed well before its hash began.
 */
const STAMPS_NAME = 'demo-models.verified.json';
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

const sameStamp = (a: Stamp, b: Stamp) =>
  a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs && a.sha256 === b.sha256;

function readStamps(dir: string): Record<string, Stamp> {
  try {
    const stamps = JSON.parse(fs.readFileSync(path.join(dir, STAMPS_NAME), 'utf8')) as unknown;
    return stamps && typeof stamps === 'object' && !Array.isArray(stamps) ? (stamps as Record<string, Stamp>) : {};
  } catch {
    // Missing or unreadable: every file is hashed again, which is only slower.
    return {};
  }
}

/** Whether `fileName` in `dir`, as it is now (`stat`), was found to have `sha256` since its last change. */
export function verifiedSince(dir: string, fileName: string, stat: fs.Stats, sha256: string): boolean {
  const stamp = readStamps(dir)[fileName];
  return stamp !== undefined && sameStamp(stamp, stampOf(stat, sha256));
}

/**
 * Remembers that `fileName`, stat'ed as `before` and hashed from `hashStartedAt` on, has `sha256`:
 * only when it was last changed a second before the hash began and is unchanged after it.
 */
export function rememberVerified(dir: string, fileName: string, before: fs.Stats, sha256: string, hashStartedAt: number): void {
  const file = path.join(dir, fileName);
  const after = fs.statSync(file, { throwIfNoEntry: false });
  if (!after || before.ctimeMs > hashStartedAt - SETTLED_MS || !sameStamp(stampOf(before, sha256), stampOf(after, sha256))) return;
  const stamps = { ...readStamps(dir), [fileName]: stampOf(after, sha256) };
  // Renamed into place: the demo folder may be linked file by file into another data folder, and an
  // in-place write would change the other folder's copy too.
  const partial = path.join(dir, `${STAMPS_NAME}.${process.pid}.partial`);
  try {
    fs.writeFileSync(partial, JSON.stringify(stamps, null, 2));
    fs.renameSync(partial, path.join(dir, STAMPS_NAME));
  } catch {
    // A read-only data folder still works; its files are hashed on every check.
    fs.rmSync(partial, { force: true });
  }
}
