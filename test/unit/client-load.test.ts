import { describe, expect, it } from 'vitest';
import { clientBehindReason, SATURATED_LOOP_UTILIZATION, STALLED_LOOP_DELAY_MS } from '../../src/main/metrics/client-behind';
import { measuredWindowClientLoad, watchClientLoad } from '../../src/main/runner/client-load';
import type { ClientLoad } from '../../src/shared/contract/runs';
import { clientLoadLine } from '../../src/shared/client-load-line';
import { measuredRequest, summarizeCompleted } from '../support/measured-request';

// Constructed loads: a client with room to spare, one whose loop is saturated, one that stalls now and then.
const idle: ClientLoad = { loop_utilization: 0.12, loop_delay_ms_p99: 1.4, loop_delay_ms_max: 9, cpu_cores: 0.15, window_ms: 60_000 };
const saturated: ClientLoad = { ...idle, loop_utilization: 0.97, loop_delay_ms_p99: 31, cpu_cores: 1.02 };
const stalling: ClientLoad = { ...idle, loop_utilization: 0.4, loop_delay_ms_p99: 180, loop_delay_ms_max: 420 };

const closedRun = (clientLoad: ClientLoad | null) =>
  summarizeCompleted(
    Array.from({ length: 20 }, (_, i) => measuredRequest(i)),
    { load: { mode: 'closed', concurrency: 5000 }, clientLoad },
  );

describe("the client's own load", () => {
  it('judges a saturated or stalled loop, and not one with room to spare', () => {
    expect(clientBehindReason(idle)).toBeNull();
    expect(clientBehindReason(saturated)).toMatch(/^the client was saturated: its event loop was busy 97 % of the window \(1\.02 cores/);
    expect(clientBehindReason(stalling)).toMatch(/^the client stalled: its event loop ran timers 180 ms late at p99 \(max 420 ms\)/);
    // At the edges: exactly at a threshold counts as behind.
    expect(clientBehindReason({ ...idle, loop_utilization: SATURATED_LOOP_UTILIZATION })).not.toBeNull();
    expect(clientBehindReason({ ...idle, loop_delay_ms_p99: STALLED_LOOP_DELAY_MS })).not.toBeNull();
    expect(clientBehindReason({ ...idle, loop_delay_ms_p99: null, loop_delay_ms_max: null })).toBeNull();
  });

  it('marks a closed-loop run client-bound, which a schedule slip alone never could', () => {
    const marked = closedRun(saturated);
    expect(marked.load.client_bound).toBe(true);
    expect(marked.load.note).toMatch(/^the client was saturated/);
    expect(marked.load.client).toEqual(saturated);
    // The judgment by schedule slip alone, as before the client was watched: blind in closed loop.
    expect(closedRun(null).load.client_bound).toBe(false);
    expect(closedRun(null).load.client).toBeUndefined();
    expect(closedRun(idle).load).toMatchObject({ client_bound: false, note: null, client: idle });
  });

  it('prints the figures a user needs to judge the client', () => {
    expect(clientLoadLine(saturated)).toBe(
      'client: event loop busy 97 % of the window, timers late 31.0 ms at p99 (max 9.0 ms), 1.02 cores of CPU',
    );
    expect(clientLoadLine({ ...idle, loop_delay_ms_p99: null })).toContain('timer delay not sampled');
  });

  it('measures a loop held busy, and nothing before the measured window opens', async () => {
    const watch = watchClientLoad();
    await new Promise((resolve) => setTimeout(resolve, 10));
    const until = performance.now() + 150;
    while (performance.now() < until);
    await new Promise((resolve) => setTimeout(resolve, 10));
    const load = watch.stop();
    expect(load.loop_delay_ms_max).toBeGreaterThanOrEqual(140);
    expect(load.loop_utilization).toBeGreaterThan(0.4);
    expect(load.cpu_cores).toBeGreaterThan(0);
    // Stopping twice gives the same figures.
    expect(watch.stop()).toBe(load);
    expect(measuredWindowClientLoad().stop()).toBeNull();
  });
});
