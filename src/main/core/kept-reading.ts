import fs from 'node:fs';
import path from 'node:path';
import { ensurePrivateDir, PRIVATE_FILE_MODE } from './private-files';
import { readTextFileCapped } from './read-capped';

export interface KeptReadingOptions<T> {
  /** Where the reading is kept between processes. */
  file: string;
  /** What the reading depends on: a file written under another key is not this reading. */
  key: string;
  keepMs: number;
  /** A kept file larger than this is not read at all. */
  maxBytes: number;
  /** The shape a kept value must have; anything else in the file is ignored. */
  isValue: (value: unknown) => value is T;
  read: () => Promise<T>;
  now?: () => number;
}

interface KeptEntry {
  key: string;
  read_at: number;
  value: unknown;
}

/** Readings under other keys stay beside this one (a few, the newest), so two callers that alternate do not overwrite each other. */
const KEPT_KEYS = 8;

/**
 * A reading shared by the processes that ask within `keepMs` of it under the same key: the
 * CLI runs once per command, and without this each run would read again what a run a minute
 * before read. The file is a cache and nothing more: a missing, unreadable, oversized or
 * malformed file, or an entry that is foreign-keyed, future-dated, stale or of the wrong
 * shape, is passed over and the reading taken afresh, and a file that cannot be written
 * leaves the reading as it is.
 */
export async function keptReading<T>(options: KeptReadingOptions<T>): Promise<T> {
  const now = options.now ?? Date.now;
  const entries = await readEntries(options);
  const fresh = (entry: KeptEntry, at: number) => at - entry.read_at >= 0 && at - entry.read_at <= options.keepMs;
  const at = now();
  const kept = entries.find((entry) => entry.key === options.key && fresh(entry, at));
  if (kept && options.isValue(kept.value)) return kept.value;
  const value = await options.read();
  const readAt = now();
  const others = entries.filter((entry) => entry.key !== options.key && fresh(entry, readAt));
  writeKept(options.file, [{ key: options.key, read_at: readAt, value }, ...others].slice(0, KEPT_KEYS));
  return value;
}

async function readEntries<T>(options: KeptReadingOptions<T>): Promise<KeptEntry[]> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readTextFileCapped(options.file, 'a kept reading', options.maxBytes));
  } catch {
    return [];
  }
  return Array.isArray(parsed) ? parsed.filter(isKeptEntry) : [];
}

function isKeptEntry(value: unknown): value is KeptEntry {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return typeof candidate.key === 'string' && typeof candidate.read_at === 'number' && Number.isFinite(candidate.read_at);
}

/** Written beside the target and renamed over it, so a reader never sees half a file. */
function writeKept(file: string, entries: KeptEntry[]): void {
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    ensurePrivateDir(path.dirname(file));
    fs.writeFileSync(temporary, JSON.stringify(entries), { mode: PRIVATE_FILE_MODE });
    fs.renameSync(temporary, file);
  } catch {
    try {
      fs.rmSync(temporary, { force: true });
    } catch {
      // Its folder could not be made: there is nothing to remove.
    }
  }
}
