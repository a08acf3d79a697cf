import fs from 'node:fs';
import path from 'node:path';

/** Linux's description of the first CPU's caches (one `indexN` folder per cache). */
export const CPU_CACHE_DIR = '/sys/devices/system/cpu/cpu0/cache';

/** `32768K`, `1M`, `512` (bytes) as sysfs writes cache sizes. */
function cacheSizeBytes(text: string): number | null {
  const match = /^(\d+)\s*([KMG]?)$/i.exec(text.trim());
  if (!match) return null;
  const scale = { '': 1, K: 2 ** 10, M: 2 ** 20, G: 2 ** 30 }[match[2]!.toUpperCase() as '' | 'K' | 'M' | 'G'];
  return Number(match[1]) * scale;
}

/**
 * The size of the largest data (or unified) cache at the highest level the first CPU has, in
 * bytes; null where sysfs does not describe it (macOS, Windows, some containers).
 */
export function lastLevelCacheBytes(dir = CPU_CACHE_DIR): number | null {
  let entries: string[];
  try {
    entries = fs.readdirSync(dir).filter((name) => /^index\d+$/.test(name));
  } catch {
    return null;
  }
  let best: { level: number; bytes: number } | null = null;
  for (const entry of entries) {
    const read = (file: string) => {
      try {
        return fs.readFileSync(path.join(dir, entry, file), 'utf8').trim();
      } catch {
        return null;
      }
    };
    if (read('type') === 'Instruction') continue;
    const level = Number(read('level'));
    const bytes = cacheSizeBytes(read('size') ?? '');
    if (!Number.isInteger(level) || bytes === null) continue;
    if (!best || level > best.level || (level === best.level && bytes > best.bytes)) best = { level, bytes };
  }
  return best?.bytes ?? null;
}
