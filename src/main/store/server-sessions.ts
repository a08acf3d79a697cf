import type { ColdStart, EffectiveConfig, ServerFault, ServerProfile, ServerState } from '../../shared/contract/server';
import { identify, isAlive, type ProcessIdentity } from '../core/process-identity';
import { redactArgv, redactSecrets } from '../core/redact';
import type { Db } from './database';

export interface SessionStart {
  id: string;
  engine: string;
  binary: string;
  argv: string[];
  modelRef: string;
  modelPath: string;
  profile: ServerProfile;
  pid: number | null;
  port: number | null;
}

export interface OrphanSweep {
  killed: { sessionId: string; pid: number; port: number | null }[];
  closed: number;
}

const owner = identify(process.pid);

/**
 * Every launched server is recorded with its pid and start time and its owner's. A server
 * whose owner died (a SIGKILLed CLI, a crashed app) is an orphan: the next start of any
 * command kills it, checking the start time so a recycled pid is never touched.
 */
export class ServerSessionStore {
  constructor(private readonly db: Db) {}

  /** Records a launch; a retry of the same server (a new port after a bind failure) replaces the attempt. */
  recordStart(session: SessionStart): void {
    const pidIdentity = session.pid === null ? null : identify(session.pid);
    this.db
      .prepare(
        `
      INSERT INTO server_sessions (id, engine, binary, argv_json, model_ref, model_path, profile_json, pid, pid_start_ticks, port, owner_pid, owner_start_ticks, started_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (id) DO UPDATE SET argv_json = excluded.argv_json, pid = excluded.pid, pid_start_ticks = excluded.pid_start_ticks,
        port = excluded.port, started_at = excluded.started_at, ended_at = NULL, final_state = NULL, fault_json = NULL`,
      )
      .run(
        // The launch itself had the secrets; the record keeps only that they were given.
        session.id,
        session.engine,
        session.binary,
        JSON.stringify(redactArgv(session.argv)),
        session.modelRef,
        session.modelPath,
        JSON.stringify(redactSecrets(session.profile)),
        session.pid,
        pidIdentity?.startTicks ?? null,
        session.port,
        owner.pid,
        owner.startTicks,
        new Date().toISOString(),
      );
  }

  recordReady(id: string, coldStart: ColdStart, effective: EffectiveConfig): void {
    this.db
      .prepare('UPDATE server_sessions SET ready_at = ?, cold_start_json = ?, effective_config_json = ? WHERE id = ?')
      .run(new Date().toISOString(), JSON.stringify(coldStart), JSON.stringify(redactSecrets(effective)), id);
  }

  recordEnd(id: string, state: ServerState, fault: ServerFault | null): void {
    this.db
      .prepare('UPDATE server_sessions SET ended_at = ?, final_state = ?, fault_json = ? WHERE id = ? AND ended_at IS NULL')
      .run(new Date().toISOString(), state, fault ? JSON.stringify(fault) : null, id);
  }

  coldStart(id: string): ColdStart | null {
    const row = this.db.prepare('SELECT cold_start_json FROM server_sessions WHERE id = ?').get(id) as
      { cold_start_json: string | null } | undefined;
    return row?.cold_start_json ? (JSON.parse(row.cold_start_json) as ColdStart) : null;
  }

  async sweepOrphans(graceMs = 3000): Promise<OrphanSweep> {
    const open = this.db
      .prepare('SELECT id, pid, pid_start_ticks, port, owner_pid, owner_start_ticks FROM server_sessions WHERE ended_at IS NULL')
      .all() as {
      id: string;
      pid: number | null;
      pid_start_ticks: number | null;
      port: number | null;
      owner_pid: number;
      owner_start_ticks: number | null;
    }[];
    const result: OrphanSweep = { killed: [], closed: 0 };
    for (const row of open) {
      if (isAlive({ pid: row.owner_pid, startTicks: row.owner_start_ticks })) continue;
      // Without a recorded start time we cannot prove the pid is still our server: leave it.
      if (row.pid !== null && row.pid_start_ticks !== null) {
        const server: ProcessIdentity = { pid: row.pid, startTicks: row.pid_start_ticks };
        if (isAlive(server)) {
          await killProcessGroup(server, graceMs);
          result.killed.push({ sessionId: row.id, pid: row.pid, port: row.port });
        }
      }
      this.recordEnd(row.id, 'stopped', {
        code: 'crashed',
        message: `the process that started this server (pid ${row.owner_pid}) ended without stopping it`,
        hint: 'Swept as an orphan.',
        exitCode: null,
        signal: null,
        logTail: [],
      });
      result.closed += 1;
    }
    return result;
  }
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
