import { describe, expect, it } from 'vitest';
import { finiteCopy, percentile, sortedFinite, summarize, type TailPercentile } from '../../src/main/metrics/distribution';
import { selectRanks } from '../../src/main/metrics/order-statistics';
import { summarizeRun } from '../../src/main/metrics/run-summary';
import { measuredRequest } from '../support/measured-request';
import { seededRandom } from '../../src/main/core/random';
import { PERCENTILE_MIN_N } from '../../src/shared/experiment-defaults';

const QUANTILE = { p50: 0.5, p90: 0.9, p95: 0.95, p99: 0.99 } as const;

/** The summary as it was computed before selection: a full sort, then interpolation. */
function summaryBySort(values: number[]) {
  const sorted = sortedFinite(values);
  const n = sorted.length;
  const tail = (label: TailPercentile) => (n < PERCENTILE_MIN_N[label] ? null : percentile(sorted, QUANTILE[label]));
  return {
    n,
    p50: percentile(sorted, 0.5),
    p90: tail('p90'),
    p95: tail('p95'),
    p99: tail('p99'),
    min: n ? sorted[0]! : null,
    max: n ? sorted[n - 1]! : null,
  };
}

// Constructed samples shaped like real gaps: continuous, timer-quantized (many ties), bimodal with a long tail, sorted, reversed.
function sample(kind: number, n: number, random: () => number): number[] {
  switch (kind) {
    case 0:
      return Array.from({ length: n }, () => 5 + random() * 30);
    case 1:
      return Array.from({ length: n }, () => Math.round(random() * 4));
    case 2:
      return Array.from({ length: n }, () => (random() < 0.97 ? 12 + random() : 400 + random() * 3000));
    case 3:
      return Array.from({ length: n }, (_, i) => i * 0.5);
    default:
      return Array.from({ length: n }, (_, i) => n - i);
  }
}

describe('exact percentiles by selection', () => {
  it('equals the full sort on every percentile, min and max, over 500 seeded samples of many shapes and sizes', () => {
    const random = seededRandom(2026);
    let compared = 0;
    for (let trial = 0; trial < 500; trial += 1) {
      const n = Math.floor(random() ** 2 * 3000);
      const values = sample(trial % 5, n, random);
      // Non-finite values, as a broken stream leaves them, are ignored by both.
      if (trial % 7 === 0) values.push(Number.NaN, Number.POSITIVE_INFINITY);
      const selected = summarize(values);
      expect(selected).toMatchObject(summaryBySort(values));
      compared += 1;
    }
    expect(compared).toBe(500);
  });

  it('puts the k-th smallest value at every asked rank, and only rearranges the values', () => {
    const random = seededRandom(7);
    const values = Float64Array.from(sample(2, 10_000, random));
    const sorted = Float64Array.from(values).sort();
    const ranks = [0, 1, 4_999, 5_000, 9_899, 9_900, 9_998, 9_999, 12_000, -1];
    selectRanks(values, ranks);
    for (const rank of ranks.filter((rank) => rank >= 0 && rank < 10_000)) expect(values[rank], `rank ${rank}`).toBe(sorted[rank]);
    expect(Float64Array.from(values).sort()).toEqual(sorted);
  });

  it('stays exact on adversarial orders: all equal, sawtooth, organ pipe', () => {
    const shapes = [
      Array.from({ length: 50_000 }, () => 3),
      Array.from({ length: 50_000 }, (_, i) => i % 100),
      Array.from({ length: 50_000 }, (_, i) => Math.min(i, 50_000 - i)),
    ];
    for (const values of shapes) expect(summarize(values)).toMatchObject(summaryBySort(values));
  });

  it('the comparison catches a percentile read at the lower rank without interpolating', () => {
    // A deliberately wrong procedure ("lower" instead of "linear"): right order statistics, wrong use of them.
    const lowerRank = (values: number[]) => {
      const finite = finiteCopy(values);
      const n = finite.length;
      const ranks = [0.5, 0.99].map((q) => Math.floor((n - 1) * q));
      selectRanks(finite, ranks);
      return { p50: finite[ranks[0]!]!, p99: finite[ranks[1]!]! };
    };
    const random = seededRandom(11);
    let caught = 0;
    for (let trial = 0; trial < 200; trial += 1) {
      const values = sample(0, 200 + Math.floor(random() * 2000), random);
      const right = summaryBySort(values);
      const wrong = lowerRank(values);
      if (wrong.p50 !== right.p50 || wrong.p99 !== right.p99) caught += 1;
      expect(summarize(values)).toMatchObject(right);
    }
    expect(caught).toBeGreaterThan(150);
  });

  it("keeps each group's ITL and the run's exact when the groups are summarized in place, one segment each", () => {
    const random = seededRandom(23);
    const groups = ['short', 'long', 'chat'];
    const gapsOf = new Map(groups.map((name) => [name, [] as number[]]));
    const rows = Array.from({ length: 300 }, (_, seq) => {
      // Interleaved groups of uneven sizes and shapes, some requests failed or without chunks.
      const group = groups[Math.floor(random() * groups.length)]!;
      const chunks = Math.floor(random() * 40);
      const offsets = new Float64Array(chunks);
      for (let i = 0, t = 10; i < chunks; i += 1) offsets[i] = t += group === 'long' ? 20 + random() * 200 : random() * 5;
      const failed = random() < 0.05;
      if (!failed) for (let i = 1; i < chunks; i += 1) gapsOf.get(group)!.push(offsets[i]! - offsets[i - 1]!);
      return measuredRequest(seq, { group_name: group, chunk_offsets_ms: offsets, error_class: failed ? 'http_error' : null });
    });
    const summary = summarizeRun({
      runId: 'r',
      status: 'completed',
      statusReason: null,
      workload: { name: null, revision: null },
      rows,
      load: { mode: 'closed', concurrency: 4 },
      slo: null,
    });
    for (const group of groups) expect(summary.groups[group]!.metrics.itl_ms, group).toMatchObject(summaryBySort(gapsOf.get(group)!));
    expect(summary.metrics.itl_ms).toMatchObject(summaryBySort(groups.flatMap((group) => gapsOf.get(group)!)));
  });
});
