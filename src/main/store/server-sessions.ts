import type { ColdStart, EffectiveConfig, ServerFault, ServerProfile, ServerState } from '../../shared/contract/server';
import { identify, type ProcessIdentity } from '../core/process-identity';
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

/** A session not yet ended: its server's process (as launched) and the process that owns it. */
export interface OpenSession {
  id: string;
  server: ProcessIdentity | null;
  port: number | null;
  owner: ProcessIdentity;
}

const owner = identify(process.pid);

/**
 * Every launched server is recorded with its pid and start time and its owner's, so that a
 * server whose owner died (a SIGKILLed CLI, a crashed app) can be found and stopped later
 * (server/orphan-sweep.ts).
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

  /** Sessions not yet ended, with the processes that own and run them. */
  openSessions(): OpenSession[] {
    const rows = this.db
      .prepare('SELECT id, pid, pid_start_ticks, port, owner_pid, owner_start_ticks FROM server_sessions WHERE ended_at IS NULL')
      .all() as {
      id: string;
      pid: number | null;
      pid_start_ticks: number | null;
      port: number | null;
      owner_pid: number;
      owner_start_ticks: number | null;
    }[];
    return rows.map((row) => ({
      id: row.id,
      server: row.pid === null ? null : { pid: row.pid, startTicks: row.pid_start_ticks },
      port: row.port,
      owner: { pid: row.owner_pid, startTicks: row.owner_start_ticks },
    }));
  }
}
