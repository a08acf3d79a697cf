import fs from 'node:fs';

/**
 * A process is identified by pid *and* start time, so that a recycled pid belonging to an
 * unrelated process is never mistaken for ours (and never killed).
 */
export interface ProcessIdentity {
  pid: number;
  /** Start time in clock ticks since boot (Linux); null where the OS does not tell. */
  startTicks: number | null;
}

export function processStartTicks(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces and parentheses: split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[19]);
    return Number.isFinite(ticks) ? ticks : null;
  } catch {
    return null;
  }
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
  if (identity.startTicks === null) return true;
  return processStartTicks(identity.pid) === identity.startTicks;
}
