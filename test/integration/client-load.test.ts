import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { defaultProfile } from '../../src/main/engines/llamacpp/launch-args';
import { resolveModelRef } from '../../src/main/models/demo-models';
import { runWorkload } from '../../src/main/runner/run-workload';
import { readWorkloadFile } from '../../src/main/workload/parse-workload';
import { requireEngine } from '../support/engine';
import { serverHarness } from '../support/servers';
import { chatShortWithAnswersOf } from '../support/short-workload';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

/** Holds the event loop the streams are read on, as a client with too much to do per chunk would. */
function busyFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/**
 * A server with one thread, so the client has a core of its own: a llama-server on every core
 * starves the client's loop for tens of milliseconds at a time on a two-core machine, which the run
 * rightly marks as a stalled client, and the control case would then measure the machine, not the client.
 */
function serverLeavingACoreFree() {
  return { ...defaultProfile(), threads: Math.max(1, os.availableParallelism() - 1) };
}

async function closedLoopRun(dir: string, onEachFinished: () => void) {
  const harness = await serverHarness(dir);
  const file = chatShortWithAnswersOf(dir, 16);
  try {
    const { summary } = await runWorkload({
      request: {
        workload: { def: await readWorkloadFile(file), file },
        target: {
          kind: 'model',
          modelRef: 'demo:q4_k_m',
          modelPath: await resolveModelRef('demo:q4_k_m'),
          profile: serverLeavingACoreFree(),
        },
        load: { mode: 'closed', concurrency: 2 },
        stop: { requests: 16, durationMs: null },
        warmup: 0,
        slo: null,
        timeouts: { firstTokenMs: 30_000, totalMs: 60_000 },
        private: false,
        referenceRunId: null,
        baselineMs: 0,
      },
      store: harness.store.runs,
      servers: harness.servers,
      engine: requireEngine,
      onProgress: onEachFinished,
    });
    return summary;
  } finally {
    await harness.dispose();
  }
}

describe("the client's own load, against the real llama-server", () => {
  it('a closed-loop run whose client cannot keep up is marked client-bound, with its loop figures', async () => {
    const summary = await closedLoopRun(tempDir(), () => busyFor(120));
    expect(summary.requests.completed).toBe(16);
    const client = summary.load.client!;
    expect(client.loop_delay_ms_max).toBeGreaterThanOrEqual(100);
    expect(summary.load.client_bound).toBe(true);
    expect(summary.load.note).toMatch(/the client (was saturated|stalled): .*lower the concurrency or rate/);
    // A closed loop has no schedule: the slip that judges an open-loop run cannot see this client fall behind.
    expect(summary.load.slip_ms_max).toBeNull();
  });

  it('the same run with a client that keeps up is not marked', async () => {
    const summary = await closedLoopRun(tempDir(), () => {});
    expect(summary.requests.completed).toBe(16);
    const figures = JSON.stringify(summary.load.client);
    expect(summary.load.client!.loop_utilization, figures).toBeLessThan(0.9);
    expect(summary.load.note, figures).toBeNull();
    expect(summary.load.client_bound).toBe(false);
  });
});
