import Database from 'better-sqlite3';
import type { EffectiveConfig } from '../../src/shared/contract/server';

/** What a stored run records of its server, read from the database file (readonly): the effective configuration the server reported. */
export function storedServerConfig(db: string, runId: string): EffectiveConfig {
  const record = new Database(db, { readonly: true });
  try {
    const row = record.prepare('SELECT server_json FROM runs WHERE id = ?').get(runId) as { server_json: string } | undefined;
    if (!row) throw new Error(`no run ${runId} in ${db}`);
    return JSON.parse(row.server_json).effectiveConfig;
  } finally {
    record.close();
  }
}
