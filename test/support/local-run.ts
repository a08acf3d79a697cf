import { executeRun } from '../../src/main/runner/run-executor';
import type { RunStore } from '../../src/main/store/run-store';
import type { ResolvedWorkload } from '../../src/main/workload/workload-types';
import { createBareRun } from './stored-request';

/**
 * One run of `workload` against a local endpoint, stored in `store`: closed loop at concurrency 1,
 * no warmup, generous timeouts, text kept; override what a case needs.
 */
export async function runAgainst(
  store: RunStore,
  workload: ResolvedWorkload,
  baseUrl: string,
  overrides: Partial<Parameters<typeof executeRun>[0]> = {},
): Promise<{ runId: string; execution: Awaited<ReturnType<typeof executeRun>> }> {
  const runId = createBareRun(store);
  const execution = await executeRun({
    store,
    runId,
    workload,
    target: { baseUrl },
    load: { mode: 'closed', concurrency: 1 },
    stop: { requests: 1, durationMs: null },
    warmup: 0,
    timeouts: { firstTokenMs: 5000, totalMs: 10_000 },
    private: false,
    references: null,
    ...overrides,
  });
  return { runId, execution };
}
