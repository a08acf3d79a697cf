import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { childEnvironment } from './child-env';

/**
 * A process is identified by pid *and* start time, so that a recycled pid belonging to an
 * unrelated process is never mistaken for ours (and never killed).
 */
export interface ProcessIdentity {
  pid: number;
  /** Start time: clock ticks since boot on Linux, seconds since the epoch on macOS; null where the OS does not tell. */
  startTicks: number | null;
}

/** macOS has no /proc: `ps` gives the start time to the second, enough to tell a recycled pid apart. */
function startSecondsFromPs(pid: number): number | null {
  const result = spawnSync('ps', ['-o', 'lstart=', '-p', String(pid)], { encoding: 'utf8', timeout: 2000, env: childEnvironment() });
  const started = Date.parse(result.stdout?.trim() ?? '');
  return result.status === 0 && Number.isFinite(started) ? Math.round(started / 1000) : null;
}

/** The fields of /proc/PID/stat after the command name (which may hold spaces and parentheses), or null. */
function procStatFields(pid: number): string[] | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

function startTicksOf(fields: string[] | null): number | null {
  const ticks = Number(fields?.[19]);
  return fields && Number.isFinite(ticks) ? ticks : null;
}

export function processStartTicks(pid: number): number | null {
  if (process.platform === 'darwin') return startSecondsFromPs(pid);
  return startTicksOf(procStatFields(pid));
}

export function identify(pid: number): ProcessIdentity {
  return { pid, startTicks: processStartTicks(pid) };
}

export function isAlive(identity: ProcessIdentity): boolean {
  try {
    process.kill(identity.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (process.platform === 'darwin') return identity.startTicks === null || startSecondsFromPs(identity.pid) === identity.startTicks;
  const fields = procStatFields(identity.pid);
  // A zombie has exited and holds nothing (memory, ports, GPU); it only waits to be reaped, which some containers' init never does.
  if (fields && /^[ZX]/.test(fields[0] ?? '')) return false;
  return identity.startTicks === null || startTicksOf(fields) === identity.startTicks;
}
