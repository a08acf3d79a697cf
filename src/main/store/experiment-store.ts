import crypto from 'node:crypto';
import type { DecisionRecord } from '../../shared/contract';
import type { ExperimentResult } from '../../shared/contract/experiments';
import type { Db } from './database';

export class ExperimentStore {
  constructor(private readonly db: Db) {}

  create(kind: string, protocol: unknown): string {
    const id = crypto.randomUUID();
    this.db
      .prepare("INSERT INTO experiments (id, kind, status, created_at, protocol_json) VALUES (?, ?, 'running', ?, ?)")
      .run(id, kind, new Date().toISOString(), JSON.stringify(protocol));
    return id;
  }

  addRun(experimentId: string, runId: string, condition: string, window: number): void {
    this.db
      .prepare('INSERT INTO experiment_runs (experiment_id, run_id, condition, window) VALUES (?, ?, ?, ?)')
      .run(experimentId, runId, condition, window);
  }

  /** The experiment condition and window a run measured, where it was an experiment's window. */
  windowOfRun(runId: string): { condition: string; window: number } | undefined {
    return this.db.prepare('SELECT condition, window FROM experiment_runs WHERE run_id = ? LIMIT 1').get(runId) as
      { condition: string; window: number } | undefined;
  }

  finish(experimentId: string, status: 'completed' | 'failed' | 'interrupted', result: ExperimentResult | null): void {
    this.db
      .prepare('UPDATE experiments SET status = ?, result_json = COALESCE(?, result_json) WHERE id = ?')
      .run(status, result ? JSON.stringify(result) : null, experimentId);
  }

  list(limit = 200): { id: string; kind: string; status: string; created_at: string; result_json: string | null }[] {
    return this.db
      .prepare('SELECT id, kind, status, created_at, result_json FROM experiments ORDER BY created_at DESC LIMIT ?')
      .all(limit) as { id: string; kind: string; status: string; created_at: string; result_json: string | null }[];
  }

  /** An experiment by id or unique prefix. */
  get(idOrPrefix: string): { id: string; kind: string; status: string; result: ExperimentResult | null } | undefined {
    const rows = this.db
      .prepare("SELECT id, kind, status, result_json FROM experiments WHERE id = ? OR id LIKE ? || '%' LIMIT 2")
      .all(idOrPrefix, idOrPrefix) as { id: string; kind: string; status: string; result_json: string | null }[];
    const row = rows.find((candidate) => candidate.id === idOrPrefix) ?? (rows.length === 1 ? rows[0] : undefined);
    return row
      ? {
          id: row.id,
          kind: row.kind,
          status: row.status,
          result: row.result_json ? (JSON.parse(row.result_json) as ExperimentResult) : null,
        }
      : undefined;
  }

  decisions(): DecisionRecord[] {
    const rows = this.db.prepare('SELECT id, record_json FROM decisions ORDER BY created_at DESC').all() as {
      id: string;
      record_json: string;
    }[];
    return rows.map((row) => ({
      decision_id: row.id,
      ...(JSON.parse(row.record_json) as Omit<DecisionRecord, 'decision_id'>),
    }));
  }

  recordDecision(experimentId: string | null, decidedBy: string, record: unknown): string {
    const id = crypto.randomUUID();
    this.db
      .prepare('INSERT INTO decisions (id, experiment_id, created_at, decided_by, record_json) VALUES (?, ?, ?, ?, ?)')
      .run(id, experimentId, new Date().toISOString(), decidedBy, JSON.stringify(record));
    return id;
  }
}
