import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { summarizeCondition } from '../../src/main/experiments/condition-summary';
import { experimentTable } from '../../src/main/cli/experiment-table';
import { reportHtml } from '../support/experiment-report';
import { openDatabase } from '../../src/main/store/database';
import { RunStore } from '../../src/main/store/run-store';
import { bunchedDeliveryLines } from '../../src/shared/bunched-delivery-lines';
import type { ExperimentResult } from '../../src/shared/contract/experiments';
import { sharedProtocolFields } from '../support/experiment-result';
import { createBareRun, requestMetrics, storedRequest } from '../support/stored-request';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

/**
 * A window of constructed requests from a server decoding 100 tokens/s (a 10 ms step): `bunched` of them
 * arrive at 1 ms a token, as from a client short of CPU; the rest at the server's pace; plus one failure
 * and one two-token answer, which cannot be judged.
 */
function storeWindow(runs: RunStore, judged: number, bunched: number): string {
  const id = createBareRun(runs);
  const requests = Array.from({ length: judged }, (_, seq) => {
    const tpot = seq < bunched ? 1 : 10;
    return storedRequest(seq, {
      metrics: requestMetrics({ ttft_ms: 20, e2e_ms: 20 + 7 * tpot, tpot_ms: tpot, output_tokens: 8, decode_tokens_per_s: 100 }),
    });
  });
  requests.push(storedRequest(judged, { metrics: requestMetrics({ output_tokens: 2, tpot_ms: 0.5, decode_tokens_per_s: 100 }) }));
  requests.push(
    storedRequest(judged + 1, {
      errorClass: 'timeout',
      errorMessage: 'no first token',
      metrics: requestMetrics({ ttft_ms: null, e2e_ms: null }),
    }),
  );
  runs.addRequests(id, requests);
  return id;
}

describe('bunched token delivery in an experiment', () => {
  it("keeps each window's counts in the condition and says under the table which windows most came bunched in", async () => {
    const runs = new RunStore(openDatabase(path.join(tempDir(), 'runs.db')));
    const f16 = summarizeCondition(runs, 'f16', [storeWindow(runs, 32, 0), storeWindow(runs, 32, 0)]).result;
    const q4 = summarizeCondition(runs, 'q4_k_m', [storeWindow(runs, 32, 3), storeWindow(runs, 32, 20), storeWindow(runs, 32, 16)]).result;
    expect(f16.delivery).toEqual([
      { judged_requests: 32, bunched_requests: 0 },
      { judged_requests: 32, bunched_requests: 0 },
    ]);
    expect(q4.delivery).toEqual([
      { judged_requests: 32, bunched_requests: 3 },
      { judged_requests: 32, bunched_requests: 20 },
      { judged_requests: 32, bunched_requests: 16 },
    ]);
    const lines = bunchedDeliveryLines([f16, q4]);
    expect(lines).toHaveLength(1);
    // Half exactly (16 of 32) is not "most".
    expect(lines[0]).toMatch(/^BUNCHED TOKENS: q4_k_m 39 of 96 requests \(over half in window 2: 20 of 32\)\. /);
    expect(lines[0]).toMatch(/In a window where most did, its TPOT p50, the figure the verdicts compare, measures delivery too\./);
    expect(lines[0]).toMatch(/leave a core free \(--set threads=N\)\.$/);

    const result: ExperimentResult = {
      experiment_id: 'e'.repeat(32),
      kind: 'quant',
      status: 'completed',
      protocol: sharedProtocolFields('quant'),
      conditions: [f16, q4],
      verdicts: [],
      recommendation: { choice: null, reason: 'constructed', excluded: [] },
    };
    const table = experimentTable(result);
    expect(table).toContain(`\n${lines[0]}`);
    // Nothing chosen reads as such, with no empty line after it where no condition was set aside.
    expect(table).toMatch(/\n\nrecommendation: none: constructed\n\n(energy|BUNCHED)/);
    expect(await reportHtml(result)).toContain('<p class="bad" data-bunched-delivery>BUNCHED TOKENS: q4_k_m 39 of 96 requests');
  });

  it('says nothing when no answer came bunched, nor for results stored before windows kept their counts', () => {
    expect(bunchedDeliveryLines([{ name: 'a', delivery: [{ judged_requests: 10, bunched_requests: 0 }] }])).toEqual([]);
    expect(bunchedDeliveryLines([{ name: 'older' }])).toEqual([]);
    // A window with nothing judged (every answer failed or under three tokens) is never called mostly bunched.
    expect(
      bunchedDeliveryLines([
        {
          name: 'b',
          delivery: [
            { judged_requests: 0, bunched_requests: 0 },
            { judged_requests: 4, bunched_requests: 1 },
          ],
        },
      ]),
    ).toEqual([expect.stringMatching(/^BUNCHED TOKENS: b 1 of 4 requests\. /)]);
    // Without such a window, nothing is said of the verdicts' TPOT p50.
    expect(bunchedDeliveryLines([{ name: 'c', delivery: [{ judged_requests: 4, bunched_requests: 2 }] }])[0]).not.toMatch(/In a window/);
  });
});
