import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/main/core/random';
import { CDF_SAMPLE_CAP, compareRuns } from '../../src/main/services/compare-runs';
import { columnLabel, columnsShownIn } from '../../src/shared/metric-columns';
import { KIND_OWN_PARTS } from '../../src/shared/metric-table';
import { openDatabase } from '../../src/main/store/database';
import { RunStore } from '../../src/main/store/run-store';
import { createBareRun, requestMetrics, storedRequest } from '../support/stored-request';
import { measuredRequest, summarizeCompleted } from '../support/measured-request';
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

/** A finished embeddings run: `rate` inputs/s in its summary, and seeded latencies. */
function storeEmbeddingsRun(runs: RunStore, rate: number, seed: number): string {
  const random = seededRandom(seed);
  const runId = createBareRun(runs, { kind: 'bench' });
  runs.addRequests(
    runId,
    Array.from({ length: 40 }, (_, seq) =>
      storedRequest(seq, { metrics: requestMetrics({ ttft_ms: null, tpot_ms: null, e2e_ms: 50 + random() * 10 }) }),
    ),
  );
  const embeddings = {
    requests: 40,
    inputs: 160,
    inputs_per_request_mean: 4,
    inputs_per_s: rate,
    input_tokens: 6400,
    input_tokens_per_s: rate * 40,
  };
  runs.finishRun(runId, 'completed', null, { ...summarizeCompleted([measuredRequest(0)]), embeddings });
  return runId;
}

describe('compareRuns', () => {
  it('compares embeddings runs on inputs/s, and shows the row only where a compared run has the figure', () => {
    const runs = new RunStore(openDatabase(path.join(tempDir(), 'runs.db')));
    const [a, b, chat] = [storeEmbeddingsRun(runs, 40, 1), storeEmbeddingsRun(runs, 55.5, 2), storeRun(runs, 50, 3)];
    const row = (ids: string[]) => compareRuns(runs, ids).rows.find((entry) => entry.metric === 'inputs/s');
    expect(row([a, b])).toMatchObject({ unit: 'inputs/s', values: [40, 55.5] });
    // Beside a chat run the row stays, with that run's figure missing; between chat runs there is none.
    expect(row([a, chat])?.values).toEqual([40, null]);
    expect(row([chat, storeRun(runs, 50, 4)])).toBeUndefined();
  });

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
    // Rates of a part these runs lack (an embeddings run's inputs/s) are left out.
    expect(fromKept.rows.map((row) => [row.metric, row.unit])).toEqual([
      ...columnsShownIn('compare')
        .filter(({ definition }) => !KIND_OWN_PARTS.includes(definition.summary.part))
        .map(({ metric, statistic, definition }) => [columnLabel(metric, statistic), definition.unit]),
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

  it("leaves out the GPU memory of a run whose engine ran on the CPU, and says why, where a GPU run's stays", () => {
    const runs = new RunStore(openDatabase(path.join(tempDir(), 'runs.db')));
    // Constructed: the same GPU read in both runs; the first run's engine offloaded every layer, the second's none.
    const storeOn = (state: 'full' | 'none', peakMib: number) => {
      const runId = createBareRun(runs, { kind: 'bench' });
      runs.addRequests(runId, [storedRequest(0)]);
      const summary = summarizeCompleted([measuredRequest(0)]);
      summary.gpu_offload = { state, backend: state === 'full' ? 'cuda' : 'cpu', layers: null, reason: null };
      summary.telemetry = { gpu: { peak_used_mib: peakMib } } as unknown as NonNullable<typeof summary.telemetry>;
      runs.saveTelemetry(runId, [{ series: 'gpu0.memory_used', unit: 'MiB', points: Float64Array.from([0, peakMib - 100, 500, peakMib]) }]);
      runs.finishRun(runId, 'completed', null, summary);
      return runId;
    };
    const onGpu = storeOn('full', 6000);
    const onCpu = storeOn('none', 5000);
    const comparison = compareRuns(runs, [onGpu, onCpu]);
    expect(comparison.rows.find((row) => row.metric === 'VRAM peak')?.values).toEqual([6000, null]);
    expect(comparison.runs.map((run) => run.vramTimeline.length)).toEqual([2, 0]);
    expect(comparison.notes).toContain(
      `${onCpu.slice(0, 8)} ran on the CPU with nothing offloaded: the GPU memory read during it was not its own, so VRAM peak and the VRAM chart leave it out.`,
    );
    expect(compareRuns(runs, [onGpu, storeOn('full', 6100)]).notes.some((note) => note.includes('ran on the CPU'))).toBe(false);
  });
});
