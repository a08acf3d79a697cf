import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/main/core/random';
import { CDF_SAMPLE_CAP, compareRuns } from '../../src/main/services/compare-runs';
import { columnLabel, columnsShownIn } from '../../src/shared/metric-columns';
import { openDatabase } from '../../src/main/store/database';
import { RunStore } from '../../src/main/store/run-store';
import { createBareRun, requestMetrics, storedRequest } from '../support/stored-request';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

/** A finished run of `count` requests with seeded latencies (constructed), a few failed and one without a TPOT. */
function storeRun(runs: RunStore, count: number, seed: number): string {
  const random = seededRandom(seed);
  const runId = createBareRun(runs, { kind: 'bench' });
  runs.addRequests(
    runId,
    Array.from({ length: count }, (_, seq) =>
      storedRequest(seq, {
        errorClass: seq % 97 === 5 ? 'http_error' : null,
        metrics: requestMetrics({ ttft_ms: 20 + random() * 30, e2e_ms: 80 + random() * 40, tpot_ms: seq === 3 ? null : 1 + random() }),
      }),
    ),
  );
  runs.finishRun(runId, 'completed', null, undefined);
  return runId;
}

describe('compareRuns', () => {
  it('gives the same comparison from the kept latency columns as from the requests, with CDFs of at most 256 points from min to max', () => {
    const db = openDatabase(path.join(tempDir(), 'runs.db'));
    const runs = new RunStore(db);
    const ids = [storeRun(runs, 3000, 1), storeRun(runs, 3000, 2), storeRun(runs, 120, 3)];
    const fromKept = compareRuns(runs, ids);
    db.prepare('DELETE FROM run_latency_columns').run();
    db.prepare("UPDATE runs SET status = 'running'").run();
    const fromRequests = compareRuns(runs, ids);
    expect(db.prepare('SELECT COUNT(*) FROM run_latency_columns').pluck().get()).toBe(0);
    expect(fromKept.rows).toEqual(fromRequests.rows);
    // The metric rows are the metric table's (shows.compare), latencies with intervals first; the per-run figures follow.
    expect(fromKept.rows.map((row) => [row.metric, row.unit])).toEqual([
      ...columnsShownIn('compare').map(({ metric, statistic, definition }) => [columnLabel(metric, statistic), definition.unit]),
      ['accepted-task rate', '%'],
      ['VRAM peak', 'MiB'],
      ['energy per output token', 'J'],
      ['decode bandwidth', 'GB/s'],
      ['decode bandwidth of peak', '%'],
    ]);
    expect(fromKept.rows.slice(0, 6).every((row) => row.differences.slice(1).every((difference) => difference?.ci !== undefined))).toBe(
      true,
    );
    expect(fromKept.runs.map(({ status: _status, ...run }) => run)).toEqual(fromRequests.runs.map(({ status: _status, ...run }) => run));

    const ttft = runs.requests(ids[0]!).flatMap((row) => (row.error_class === null && row.ttft_ms !== null ? [row.ttft_ms] : []));
    const first = fromKept.runs[0]!;
    expect(first.cdf.ttft_ms).toHaveLength(CDF_SAMPLE_CAP);
    expect(first.cdf.ttft_ms[0]).toBe(Math.min(...ttft));
    expect(first.cdf.ttft_ms.at(-1)).toBe(Math.max(...ttft));
    expect([...first.cdf.ttft_ms].sort((a, b) => a - b)).toEqual(first.cdf.ttft_ms);
    // A run with fewer requests than the cap sends every value.
    expect(fromKept.runs[2]!.cdf.ttft_ms).toHaveLength(120 - 2);
    db.close();
  });
});
