import fs from 'node:fs';

/** The kernel's MemAvailable (what can be allocated without swapping), in bytes; null where /proc/meminfo has none. */
export async function readMemAvailable(meminfo = '/proc/meminfo'): Promise<number | null> {
  try {
    const match = /^MemAvailable:\s+(\d+)\s+kB/m.exec(await fs.promises.readFile(meminfo, 'utf8'));
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}
