import { describe, expect, it } from 'vitest';
import { comparisonTable } from '../../src/main/cli/commands/compare';
import { REQUEST_NOISE_ONLY, type ComparedRun, type Comparison } from '../../src/shared/contract/compare';

/** A compared run with the fields the table prints (constructed). */
function run(runId: string, label: string): ComparedRun {
  return {
    runId,
    label,
    status: 'completed',
    model: null,
    workload: null,
    workloadRevision: null,
    requests: 40,
    cdf: { ttft_ms: [], tpot_ms: [], e2e_ms: [] },
    vramPeakMib: null,
    outputTokensPerS: null,
    ttftP95Ms: null,
    groups: {},
    vramTimeline: [],
  };
}

const comparison = (note: string | null): Comparison => ({
  runs: [run('aaaaaaaa-1', 'demo:q8_0'), run('bbbbbbbb-2', 'demo:q4_k_m')],
  rows: [
    {
      metric: 'TTFT p50',
      unit: 'ms',
      values: [101.5, 82.2],
      differences: [null, { difference: -19.3, ci: [-39.1, -11.5], verdict: 'insufficient data', note }],
    },
    { metric: 'output tok/s', unit: 'tok/s', values: [525.7, 610.8], differences: [null, null] },
  ],
  notes: [],
});

describe('inferlab compare: the table', () => {
  it('says "request noise only" where an interval has one window a side, and why once below the table', () => {
    const table = comparisonTable(comparison(REQUEST_NOISE_ONLY));
    expect(table).toMatch(/^TTFT p50 +101\.5 ms +82\.2 ms, -19\.3 \[-39\.1, -11\.5\], request noise only$/m);
    expect(table).toMatch(/^output tok\/s +525\.7 tok\/s +610\.8 tok\/s, —, —$/m);
    expect(table).not.toMatch(/insufficient data/);
    expect(table.match(/note: request noise only/g)).toHaveLength(1);
    expect(table).toMatch(/a bootstrap up to 500 requests a run/);
  });

  it('prints the verdict itself, with no such note, where the difference has another reason', () => {
    const table = comparisonTable(comparison('fewer than two requests on a side'));
    expect(table).toMatch(/^TTFT p50 +101\.5 ms +82\.2 ms, -19\.3 \[-39\.1, -11\.5\], insufficient data$/m);
    expect(table).not.toMatch(/request noise only/);
  });
});
