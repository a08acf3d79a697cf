import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/main/store/database';
import { RunStore } from '../../src/main/store/run-store';
import { storeSampleRun } from '../support/stored-run';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

describe('latency columns for Compare', () => {
  it('hold the same values as the per-request rows, sorted, with warmup, failures and nulls left out', () => {
    const db = openDatabase(path.join(tempDir(), 'runs.db'));
    const runs = new RunStore(db);
    const runId = storeSampleRun(runs);
    // More measured requests, out of order, one without a TPOT (a one-token answer).
    const [, measured] = db.prepare('SELECT * FROM requests WHERE run_id = ? ORDER BY seq').all(runId) as Record<string, unknown>[];
    const insert = db.prepare(
      `INSERT INTO requests (${Object.keys(measured!).join(', ')}) VALUES (${Object.keys(measured!)
        .map((key) => `@${key}`)
        .join(', ')})`,
    );
    [
      [30, 90, 2.5],
      [7, 40, null],
      [12, 55, 1.25],
    ].forEach(([ttft, e2e, tpot], index) => insert.run({ ...measured, seq: 10 + index, ttft_ms: ttft, e2e_ms: e2e, tpot_ms: tpot }));

    const columns = runs.sortedLatencyColumns(runId);
    const rows = runs.requests(runId).filter((row) => row.warmup === 0 && row.error_class === null);
    const sortedOf = (key: 'ttft_ms' | 'tpot_ms' | 'e2e_ms') =>
      rows.flatMap((row) => (row[key] === null ? [] : [row[key]!])).sort((a, b) => a - b);
    expect(columns.requests).toBe(rows.length);
    expect(columns.requests).toBe(4);
    expect(Array.from(columns.ttft_ms)).toEqual(sortedOf('ttft_ms'));
    expect(Array.from(columns.ttft_ms)).toEqual([4.1, 7, 12, 30]);
    expect(Array.from(columns.tpot_ms)).toEqual(sortedOf('tpot_ms'));
    expect(columns.tpot_ms).toHaveLength(3);
    expect(Array.from(columns.e2e_ms)).toEqual(sortedOf('e2e_ms'));
    db.close();
  });
});
