import fs from 'node:fs';
import path from 'node:path';
import { ensurePrivateDir, PRIVATE_FILE_MODE, restrict } from '../core/private-files';

export interface LogFileLimits {
  /** One file rotates past this size (one previous file kept). */
  maxBytes?: number;
  /** All logs in the folder together; the oldest files are deleted past it when a log opens. */
  maxTotalBytes?: number;
}

export const SERVER_LOG_MAX_BYTES = 10 * 1024 * 1024;
export const SERVER_LOGS_MAX_TOTAL_BYTES = 200 * 1024 * 1024;
/** How often a writer checks that its file still has a name on disk. */
const RELINK_CHECK_MS = 1000;

/**
 * Deletes the least recently written files in `dir`, sparing `keep`, until the folder holds
 * at most `maxTotalBytes`. One server per run at up to 2 × 10 MB each would otherwise grow
 * without bound.
 */
export function pruneLogs(dir: string, maxTotalBytes: number, keep: ReadonlySet<string> = new Set()): void {
  let entries: { file: string; size: number; mtimeMs: number }[];
  try {
    entries = fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => {
        const file = path.join(dir, entry.name);
        const stat = fs.statSync(file);
        return { file, size: stat.size, mtimeMs: stat.mtimeMs };
      });
  } catch {
    return;
  }
  let total = entries.reduce((sum, entry) => sum + entry.size, 0);
  for (const entry of entries.sort((a, b) => a.mtimeMs - b.mtimeMs)) {
    if (total <= maxTotalBytes) break;
    if (keep.has(entry.file)) continue;
    try {
      fs.rmSync(entry.file, { force: true });
      total -= entry.size;
    } catch {
      // Someone else's file, or already gone: the next prune tries again.
    }
  }
}

/**
 * A server's log on disk, owner-only (it can quote prompts), rotated when it passes
 * `maxBytes` (one previous file kept) so a chatty server running for days cannot fill the
 * disk, and the folder's total kept under `maxTotalBytes`. If the folder is deleted while a
 * server runs, the file is recreated rather than the app failing.
 */
export class RotatingLogFile {
  private fd: number | null = null;
  private size = 0;
  private checkedAt = 0;
  private readonly maxBytes: number;

  constructor(
    readonly file: string,
    limits: LogFileLimits = {},
  ) {
    this.maxBytes = limits.maxBytes ?? SERVER_LOG_MAX_BYTES;
    const maxTotalBytes = limits.maxTotalBytes ?? SERVER_LOGS_MAX_TOTAL_BYTES;
    ensurePrivateDir(path.dirname(file));
    // Room for this log's own two files.
    pruneLogs(path.dirname(file), Math.max(0, maxTotalBytes - 2 * this.maxBytes), new Set([file, `${file}.1`]));
    this.open();
  }

  private open(): void {
    ensurePrivateDir(path.dirname(this.file));
    this.fd = fs.openSync(this.file, 'a', PRIVATE_FILE_MODE);
    restrict(this.file, PRIVATE_FILE_MODE);
    this.size = fs.fstatSync(this.fd).size;
    this.checkedAt = Date.now();
  }

  /** Reopens under the file's name when the file (or its folder) was deleted; a write to an unlinked file would be lost. */
  private relinkIfDeleted(): void {
    if (Date.now() - this.checkedAt < RELINK_CHECK_MS) return;
    this.checkedAt = Date.now();
    if (fs.fstatSync(this.fd!).nlink > 0 && fs.existsSync(this.file)) return;
    fs.closeSync(this.fd!);
    this.fd = null;
    this.open();
  }

  write(line: string): void {
    if (this.fd === null) return;
    const bytes = Buffer.from(`${line}\n`);
    try {
      this.relinkIfDeleted();
      if (this.size + bytes.length > this.maxBytes) this.rotate();
      fs.writeSync(this.fd!, bytes);
      this.size += bytes.length;
    } catch {
      // A full disk or a vanished folder must not take the server down with it; the in-memory
      // tail still has the lines, and the next write tries to reopen the file.
      if (this.fd === null) this.checkedAt = 0;
      try {
        if (this.fd === null) this.open();
      } catch {
        // Still unwritable: keep the tail in memory only.
      }
    }
  }

  private rotate(): void {
    fs.closeSync(this.fd!);
    this.fd = null;
    try {
      fs.renameSync(this.file, `${this.file}.1`);
    } catch {
      // The file (or folder) is gone: start again from nothing.
    }
    this.open();
  }

  close(): void {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
  }
}
