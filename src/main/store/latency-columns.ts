import type { MeasuredRequest } from '../../shared/contract/measurement';
import type { Db } from './database';
import { float64View } from './float64-blob';

/** What the columns are made of: a run's requests, warmups and failures included (they are left out here). */
export type LatencyRow = Pick<MeasuredRequest, 'warmup' | 'error_class' | 'ttft_ms' | 'tpot_ms' | 'e2e_ms'>;

/** A run's successful measured latencies, each column ascending with its nulls left out, and how many requests they come from. */
export interface SortedLatencyColumns {
  requests: number;
  ttft_ms: Float64Array;
  tpot_ms: Float64Array;
  e2e_ms: Float64Array;
}

/**
 * The sorted latency columns of runs, kept once a run is over. Compare, the build history and the
 * regression check read a run's latencies whole; from the requests that is one row per request and
 * a sort, for every run compared, every time (docs/PERFORMANCE.md). A finished run's requests do not
 * change, so its columns are written once (when it finishes, or at the first read of a run that
 * finished before they were kept) and read back as three blobs. A running run is always read
 * from its requests, and any write to a run's requests drops what was kept (triggers, migration 12).
 */
export class LatencyColumnStore {
  private readonly selectKept;
  private readonly insertKept;
  private readonly selectFromRequests;
  private readonly selectStatus;

  constructor(db: Db) {
    this.selectKept = db.prepare('SELECT requests, ttft_ms, tpot_ms, e2e_ms FROM run_latency_columns WHERE run_id = ?');
    this.insertKept = db.prepare(
      'INSERT OR REPLACE INTO run_latency_columns (run_id, requests, ttft_ms, tpot_ms, e2e_ms) VALUES (?, ?, ?, ?, ?)',
    );
    this.selectFromRequests = db
      .prepare('SELECT ttft_ms, tpot_ms, e2e_ms FROM requests WHERE run_id = ? AND warmup = 0 AND error_class IS NULL')
      .raw(true);
    this.selectStatus = db.prepare('SELECT status FROM runs WHERE id = ?').pluck();
  }

  read(runId: string): SortedLatencyColumns {
    const kept = this.selectKept.get(runId) as { requests: number; ttft_ms: Buffer; tpot_ms: Buffer; e2e_ms: Buffer } | undefined;
    if (kept)
      return {
        requests: kept.requests,
        ttft_ms: float64View(kept.ttft_ms),
        tpot_ms: float64View(kept.tpot_ms),
        e2e_ms: float64View(kept.e2e_ms),
      };
    const columns = this.fromRequests(runId);
    const status = this.selectStatus.get(runId) as string | undefined;
    if (status !== undefined && status !== 'running') this.keep(runId, columns);
    return columns;
  }

  /**
   * Called when a run finishes: its columns are computed now, from `requests` when the caller has
   * just read every one of the run's requests (the summary has), or else from the database.
   */
  keepFinished(runId: string, requests?: readonly LatencyRow[]): void {
    let columns: SortedLatencyColumns;
    try {
      columns = requests ? columnsOf(requests) : this.fromRequests(runId);
    } catch {
      return; // The finish is done; the first read computes them.
    }
    this.keep(runId, columns);
  }

  /**
   * Keeping them is a saving, not the answer: a finished run whose columns could not be written
   * (the disk full, another process holding the lock, a read-only copy) is still finished, and
   * still gets its comparison; they are computed again at the next read.
   */
  private keep(runId: string, columns: SortedLatencyColumns): void {
    const blob = (values: Float64Array) => Buffer.from(values.buffer, values.byteOffset, values.byteLength);
    try {
      this.insertKept.run(runId, columns.requests, blob(columns.ttft_ms), blob(columns.tpot_ms), blob(columns.e2e_ms));
    } catch {
      // Not kept: read from the requests next time.
    }
  }

  private fromRequests(runId: string): SortedLatencyColumns {
    const rows = this.selectFromRequests.all(runId) as (number | null)[][];
    const column = (index: number) => sortedFinite(rows, (row) => row[index]);
    return { requests: rows.length, ttft_ms: column(0), tpot_ms: column(1), e2e_ms: column(2) };
  }
}

/** The same columns as the database read gives, from requests already in memory. */
export function columnsOf(requests: readonly LatencyRow[]): SortedLatencyColumns {
  const successful = requests.filter((request) => !request.warmup && request.error_class === null);
  return {
    requests: successful.length,
    ttft_ms: sortedFinite(successful, (request) => request.ttft_ms),
    tpot_ms: sortedFinite(successful, (request) => request.tpot_ms),
    e2e_ms: sortedFinite(successful, (request) => request.e2e_ms),
  };
}

function sortedFinite<T>(rows: readonly T[], valueOf: (row: T) => unknown): Float64Array {
  const values = new Float64Array(rows.length);
  let n = 0;
  for (const row of rows) {
    const value = valueOf(row);
    if (typeof value === 'number' && Number.isFinite(value)) values[n++] = value;
  }
  return values.subarray(0, n).sort();
}
