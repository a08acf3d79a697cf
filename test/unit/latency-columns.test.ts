import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/main/store/database';
import { RunStore } from '../../src/main/store/run-store';
import { storeSampleRun } from '../support/stored-run';
import { createBareRun, requestMetrics, storedRequest } from '../support/stored-request';
import type { StoredRequest } from '../../src/main/store/run-rows';
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

  it('are kept when a run finishes, read back from the kept blobs, and dropped by any write to its requests', () => {
    const db = openDatabase(path.join(tempDir(), 'runs.db'));
    const runs = new RunStore(db);
    const runId = storeSampleRun(runs);
    const kept = () => db.prepare('SELECT COUNT(*) FROM run_latency_columns WHERE run_id = ?').pluck().get(runId);
    expect(kept()).toBe(1);
    const before = runs.sortedLatencyColumns(runId);
    // Planted in the kept row: what a read returns shows that the blobs, not the requests, were read.
    db.prepare('UPDATE run_latency_columns SET ttft_ms = ? WHERE run_id = ?').run(Buffer.from(Float64Array.of(1, 2, 3).buffer), runId);
    expect(Array.from(runs.sortedLatencyColumns(runId).ttft_ms)).toEqual([1, 2, 3]);

    const writes = [
      () => db.prepare('UPDATE requests SET ttft_ms = ttft_ms + 100 WHERE run_id = ? AND warmup = 0').run(runId),
      () => db.prepare('UPDATE requests SET error_class = NULL WHERE run_id = ?').run(runId),
      () =>
        db.prepare('DELETE FROM requests WHERE run_id = ? AND seq = (SELECT MAX(seq) FROM requests WHERE run_id = ?)').run(runId, runId),
    ];
    for (const write of writes) {
      runs.sortedLatencyColumns(runId);
      expect(kept()).toBe(1);
      write();
      expect(kept()).toBe(0);
      // The next read computes them from the requests as they are now, and keeps them again.
      const fresh = runs.sortedLatencyColumns(runId);
      const rows = runs.requests(runId).filter((row) => row.warmup === 0 && row.error_class === null);
      expect(fresh.requests).toBe(rows.length);
      expect(Array.from(fresh.ttft_ms)).toEqual(rows.flatMap((row) => (row.ttft_ms === null ? [] : [row.ttft_ms])).sort((a, b) => a - b));
    }
    expect(Array.from(runs.sortedLatencyColumns(runId).ttft_ms)).not.toEqual(Array.from(before.ttft_ms));
    db.close();
  });

  it('are not kept for a running run, are kept at the first read of an older finished run, and go with the run', () => {
    const db = openDatabase(path.join(tempDir(), 'runs.db'));
    const runs = new RunStore(db);
    const runId = storeSampleRun(runs);
    const kept = () => db.prepare('SELECT COUNT(*) FROM run_latency_columns WHERE run_id = ?').pluck().get(runId);
    db.prepare("UPDATE runs SET status = 'running' WHERE id = ?").run(runId);
    db.prepare('DELETE FROM run_latency_columns').run();
    expect(runs.sortedLatencyColumns(runId).requests).toBeGreaterThan(0);
    expect(kept()).toBe(0);
    // A run that finished before the columns were kept.
    db.prepare("UPDATE runs SET status = 'completed' WHERE id = ?").run(runId);
    const first = runs.sortedLatencyColumns(runId);
    expect(kept()).toBe(1);
    expect(runs.sortedLatencyColumns(runId)).toEqual(first);
    runs.deleteRun(runId);
    expect(kept()).toBe(0);
    db.close();
  });

  it('are still read from the requests where they cannot be kept: a read-only copy of the database', () => {
    const file = path.join(tempDir(), 'runs.db');
    const db = openDatabase(file);
    const runId = storeSampleRun(new RunStore(db));
    const expected = new RunStore(db).sortedLatencyColumns(runId);
    db.prepare('DELETE FROM run_latency_columns').run();
    db.close();
    const readOnly = new Database(file, { readonly: true });
    expect(new RunStore(readOnly).sortedLatencyColumns(runId)).toEqual(expected);
    readOnly.close();
  });

  it('are the same when kept from the requests the finish was handed as when read from the database', () => {
    const db = openDatabase(path.join(tempDir(), 'runs.db'));
    const runs = new RunStore(db);
    const runId = createBareRun(runs);
    // A warmup, a failure, a one-token answer (no TPOT) and measured requests out of order.
    const request = (seq: number, ttft: number, e2e: number, tpot: number | null, extra: Partial<StoredRequest> = {}) =>
      storedRequest(seq, { ...extra, metrics: requestMetrics({ ttft_ms: ttft, e2e_ms: e2e, tpot_ms: tpot }) });
    runs.addRequests(runId, [
      request(0, 1, 2, 0.5, { warmup: true }),
      request(1, 30, 90, 2.5),
      request(2, 7, 40, null),
      request(3, 99, 99, 9, { errorClass: 'http_error', errorMessage: 'loading model', httpStatus: 503 }),
      request(4, 12, 55, 1.25),
    ]);
    runs.finishRun(runId, 'completed', null, undefined, runs.measuredRequests(runId));
    const handed = runs.sortedLatencyColumns(runId);
    db.prepare('DELETE FROM run_latency_columns WHERE run_id = ?').run(runId);
    const read = runs.sortedLatencyColumns(runId);
    expect(handed.requests).toBe(3);
    expect(Array.from(handed.ttft_ms)).toEqual([7, 12, 30]);
    expect(Array.from(handed.tpot_ms)).toEqual([1.25, 2.5]);
    for (const key of ['ttft_ms', 'tpot_ms', 'e2e_ms'] as const) expect(Array.from(handed[key])).toEqual(Array.from(read[key]));
    expect(handed.requests).toBe(read.requests);
    db.close();
  });

  it('never fail the finish of a run when they cannot be written', () => {
    const db = openDatabase(path.join(tempDir(), 'runs.db'));
    const runs = new RunStore(db);
    const runId = createBareRun(runs);
    runs.addRequests(runId, [storedRequest(0), storedRequest(1)]);
    // Any failure to write them (here the table is gone) must leave the finish itself done.
    db.exec('DROP TABLE run_latency_columns');
    expect(() => runs.finishRun(runId, 'completed', null, undefined)).not.toThrow();
    expect(runs.findRun(runId)?.status).toBe('completed');
    db.close();
  });
});
