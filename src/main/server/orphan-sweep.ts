import type { OrphanSweep } from '../../shared/contract/server';
import { isAlive, type ProcessIdentity } from '../core/process-identity';
import type { ServerSessionStore } from '../store/server-sessions';

/**
 * Stops servers whose owner died without stopping them (a SIGKILLed CLI, a crashed app), as
 * every entry point does once at start-up. A server is matched by pid and start time, so a
 * recycled pid is never touched; one recorded without a start time is left alone, since it
 * cannot be proven to be ours. Each such session is closed either way.
 */
export async function sweepOrphanedServers(sessions: ServerSessionStore, graceMs = 3000): Promise<OrphanSweep> {
  const result: OrphanSweep = { killed: [], closed: 0 };
  for (const session of sessions.openSessions()) {
    if (isAlive(session.owner)) continue;
    const server = session.server;
    if (server !== null && server.startTicks !== null) {
      if (isAlive(server)) {
        await killProcessGroup(server, graceMs);
        result.killed.push({ sessionId: session.id, pid: server.pid, port: session.port });
      }
    }
    sessions.recordEnd(session.id, 'stopped', {
      code: 'crashed',
      message: `the process that started this server (pid ${session.owner.pid}) ended without stopping it`,
      hint: 'Swept as an orphan.',
      exitCode: null,
      signal: null,
      logTail: [],
    });
    result.closed += 1;
  }
  return result;
}
async function killProcessGroup(target: ProcessIdentity, graceMs: number): Promise<void> {
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-target.pid, name);
    } catch {
      try {
        process.kill(target.pid, name);
      } catch {
        // Gone already.
      }
    }
  };
  signal('SIGTERM');
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    if (!isAlive(target)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  if (isAlive(target)) signal('SIGKILL');
}
