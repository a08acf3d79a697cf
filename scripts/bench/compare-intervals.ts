/**
 * Compare's intervals as the service that answers the Compare view computes them, without the
 * browser: 20 runs of the most requests Compare still resamples (BOOTSTRAP_MAX_SAMPLES: a thousand
 * resamples a run and latency), and 20 runs of 2,000, where order statistics give the interval.
 * The Compare view row times runs of 10,000 in Chromium.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { seededRandom } from '../../src/main/core/random';
import { BOOTSTRAP_MAX_SAMPLES } from '../../src/shared/contract/compare';
import { compareRuns } from '../../src/main/services/compare-runs';
import { openDatabase } from '../../src/main/store/database';
import { RunStore } from '../../src/main/store/run-store';
import { createBareRun, requestMetrics, storedRequest } from '../../test/support/stored-request';
import type { BenchRow } from './bench-row';

const RUNS = 20;

function storeRuns(runs: RunStore, requests: number): string[] {
  return Array.from({ length: RUNS }, (_, run) => {
    const random = seededRandom(run + 1);
    const runId = createBareRun(runs, { kind: 'bench' });
    runs.addRequests(
      runId,
      Array.from({ length: requests }, (_, seq) =>
        storedRequest(seq, {
          metrics: requestMetrics({ ttft_ms: 20 + random() * 30 + run, e2e_ms: 80 + random() * 40, tpot_ms: 1 + random() }),
        }),
      ),
    );
    runs.finishRun(runId, 'completed', null, undefined);
    return runId;
  });
}

export function compareIntervals(): BenchRow[] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inferlab-bench-'));
  const db = openDatabase(path.join(dir, 'compare.db'));
  try {
    const runs = new RunStore(db);
    return [
      { requests: BOOTSTRAP_MAX_SAMPLES, how: 'bootstrap, 1000 resamples a run' },
      { requests: 2000, how: 'order statistics' },
    ].map(({ requests, how }) => {
      const ids = storeRuns(runs, requests);
      const seconds = [0, 1, 2].map(() => {
        const started = performance.now();
        compareRuns(runs, ids);
        return (performance.now() - started) / 1000;
      });
      const median = seconds.sort((a, b) => a - b)[1]!;
      return {
        figure: `Compare's rows and intervals, ${RUNS} runs × ${requests} requests (${how}; median of 3, no browser)`,
        value: `${median.toFixed(2)} s`,
        target: '≤ 0.5 s',
      };
    });
  } finally {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
