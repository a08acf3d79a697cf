/**
 * A setup file of the projects that start real servers: the CPU a test file used, its own process's and
 * that of every process it started and waited for (the CLI, the servers those started, Chromium),
 * appended to the file the reporter names (test/support/skip-reporter.ts), which totals it. On two
 * cores the suite's wall time cannot fall below half its CPU time, so this is where a slimmer CI must look.
 */
import fs from 'node:fs';
import { afterAll, beforeAll, expect } from 'vitest';
import { CPU_LOG_VARIABLE } from './cpu-log';

/** This process's CPU and its reaped children's, in seconds (Linux /proc; null elsewhere). */
function cpuSeconds(): number | null {
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    // utime stime cutime cstime are fields 14–17; the name field may hold spaces, so count from its ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = [11, 12, 13, 14].reduce((sum, index) => sum + Number(fields[index]), 0);
    // USER_HZ is 100 on every Linux this runs on (it is fixed in the kernel's ABI).
    return ticks / 100;
  } catch {
    return null;
  }
}

let startedAt: number | null = null;
beforeAll(() => {
  startedAt = cpuSeconds();
});
afterAll(() => {
  const now = cpuSeconds();
  const log = process.env[CPU_LOG_VARIABLE];
  const file = expect.getState().testPath;
  if (now === null || startedAt === null || !log || !file) return;
  fs.appendFileSync(log, `${JSON.stringify({ file, cpuSeconds: now - startedAt })}\n`);
});
