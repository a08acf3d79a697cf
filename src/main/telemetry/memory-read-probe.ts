import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { readCpuTotals } from './proc-stat';
import { lastLevelCacheBytes } from './cpu-cache';

export interface MemoryReadProbe {
  /** Median over the reps of bytes read per second by all threads together, in GB/s (1e9 bytes). */
  gb_per_s: number;
  threads: number;
  buffer_bytes: number;
  reps_gb_per_s: number[];
  measured_at: string;
  /** CPU cores other processes kept busy while the probe ran; null where /proc/stat is not readable. */
  other_busy_cores?: number | null;
}

/** Above this many cores of other work the probe reads what is left over: it is used once, not cached. */
export const PROBE_QUIET_CORES = 0.5;
const TICKS_PER_SECOND = 100;

/**
 * Runs `work` and says how many cores other processes kept busy meanwhile: the machine's busy
 * time from /proc/stat less this process's own CPU time (its worker threads included).
 */
export async function otherBusyCores<T>(work: () => Promise<T>, root = '/proc'): Promise<{ result: T; otherBusyCores: number | null }> {
  const before = readCpuTotals(root);
  const ownBefore = process.cpuUsage();
  const started = performance.now();
  const result = await work();
  const seconds = (performance.now() - started) / 1000;
  const own = process.cpuUsage(ownBefore);
  const after = readCpuTotals(root);
  if (!before || !after || seconds <= 0) return { result, otherBusyCores: null };
  const machine = (after.busyTicks - before.busyTicks) / TICKS_PER_SECOND;
  return { result, otherBusyCores: Math.max(0, (machine - (own.user + own.system) / 1e6) / seconds) };
}

/**
 * Each worker scans its own slice of one shared buffer with Buffer.indexOf for a byte that
 * is not there: a native memchr that reads every byte at the memory system's pace, which a
 * JavaScript loop would not reach. Inlined so that the bundled CLI needs no separate file.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const slice = Buffer.from(workerData.shared, workerData.offset, workerData.length);
parentPort.on('message', (passes) => {
  let found = 0;
  for (let pass = 0; pass < passes; pass++) found += slice.indexOf(1);
  parentPort.postMessage(found);
});
`;

/** Far larger than the last-level cache (8×, at least 512 MiB), and never more than a quarter of free memory. */
export function probeBufferBytes(): number {
  const cache = lastLevelCacheBytes() ?? 32 * 1024 ** 2;
  const wanted = Math.min(Math.max(8 * cache, 512 * 1024 ** 2), 1024 ** 3);
  return Math.max(64 * 1024 ** 2, Math.min(wanted, Math.floor(os.freemem() / 4)));
}

/**
 * Memory read bandwidth reachable with `threads` threads: every thread scans its share of
 * a buffer much larger than the cache, `reps` times after one warm-up pass; the median rep
 * is the figure. It is what this many threads can read, not the device peak.
 */
export async function probeMemoryRead(threads: number, options: { bufferBytes?: number; reps?: number } = {}): Promise<MemoryReadProbe> {
  const workers = Math.max(1, Math.floor(threads));
  const sliceBytes = Math.floor((options.bufferBytes ?? probeBufferBytes()) / workers / 4096) * 4096;
  const shared = new SharedArrayBuffer(sliceBytes * workers);
  // Written once so that every page is backed by its own memory (untouched pages all map one zero page, which caches).
  Buffer.from(shared).fill(2);
  const pool = Array.from(
    { length: workers },
    (_, index) => new Worker(WORKER_SOURCE, { eval: true, workerData: { shared, offset: index * sliceBytes, length: sliceBytes } }),
  );
  const pass = (passes: number) =>
    Promise.all(
      pool.map(
        (worker) =>
          new Promise<void>((resolve, reject) => {
            worker.once('message', () => resolve());
            worker.once('error', reject);
            worker.postMessage(passes);
          }),
      ),
    );
  try {
    await pass(1);
    const passes = Math.max(1, Math.ceil((512 * 1024 ** 2) / (sliceBytes * workers)));
    const reps: number[] = [];
    for (let rep = 0; rep < (options.reps ?? 7); rep++) {
      const started = performance.now();
      await pass(passes);
      const seconds = (performance.now() - started) / 1000;
      reps.push((sliceBytes * workers * passes) / seconds / 1e9);
    }
    const sorted = [...reps].sort((a, b) => a - b);
    const middle = sorted.length / 2;
    const median = sorted.length % 2 ? sorted[Math.floor(middle)]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
    return {
      gb_per_s: median,
      threads: workers,
      buffer_bytes: sliceBytes * workers,
      reps_gb_per_s: reps,
      measured_at: new Date().toISOString(),
    };
  } finally {
    await Promise.all(pool.map((worker) => worker.terminate()));
  }
}

/** One machine and thread count: the probe's figure does not change between runs, so it is measured once. */
export function probeCacheKey(threads: number): string {
  return `${os.hostname()}|${os.cpus()[0]?.model ?? 'unknown CPU'}|${os.totalmem()}|threads=${threads}`;
}

/** Probes taken beside other work: kept for this process only (an experiment probes once), never on disk. */
const busyProbes = new Map<string, MemoryReadProbe>();

/** The cached probe for this machine and thread count, else a fresh one, cached in `cacheDir`. */
export async function reachableMemoryRead(threads: number, cacheDir: string): Promise<MemoryReadProbe> {
  const file = path.join(cacheDir, 'memory-read-probe.json');
  let cache: Record<string, MemoryReadProbe> = {};
  try {
    cache = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, MemoryReadProbe>;
  } catch {
    cache = {};
  }
  const key = probeCacheKey(threads);
  const cached = cache[key];
  if (cached && cached.gb_per_s > 0) return cached;
  const earlier = busyProbes.get(key);
  if (earlier) return earlier;
  const { result, otherBusyCores: busy } = await otherBusyCores(() => probeMemoryRead(threads));
  const probe = { ...result, other_busy_cores: busy };
  if (busy !== null && busy > PROBE_QUIET_CORES) {
    busyProbes.set(key, probe);
    return probe;
  }
  cache[key] = probe;
  try {
    fs.mkdirSync(cacheDir, { recursive: true });
    fs.writeFileSync(file, `${JSON.stringify(cache, null, 2)}\n`);
  } catch {
    // An unwritable cache only means the next run measures again.
  }
  return probe;
}
