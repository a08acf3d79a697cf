import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { otherBusyCores, probeMemoryRead } from '../../src/main/metrics/memory-read-probe';

// With the integration files, which run one at a time: beside the parallel unit tests the probe would measure them.
describe('the memory-read probe', () => {
  it('measures a positive read bandwidth, stable within a factor of 1.5 across two probes', { timeout: 60_000 }, async () => {
    const probe = () => otherBusyCores(() => probeMemoryRead(2, { bufferBytes: 256 * 2 ** 20, reps: 9 }));
    const first = await probe();
    const second = await probe();
    const cores = os.availableParallelism();
    // Other work on a shared machine leaves a probe a share of the cores; its two threads can read no faster
    // than that share lets them, so each probe's bound is widened by what others took while it ran.
    const share = (busy: number | null) => Math.max(0.05, (cores - Math.min(busy ?? 0, cores)) / cores);
    const [firstShare, secondShare] = [share(first.otherBusyCores), share(second.otherBusyCores)];
    const ratio = second.result.gb_per_s / first.result.gb_per_s;
    console.log(
      `[memory-read probe] 2 threads: ${first.result.gb_per_s.toFixed(1)} GB/s, then ${second.result.gb_per_s.toFixed(1)} GB/s ` +
        `(others busy: ${first.otherBusyCores?.toFixed(2)}, then ${second.otherBusyCores?.toFixed(2)} cores)`,
    );
    expect(first.result.gb_per_s).toBeGreaterThan(0);
    expect(second.result.gb_per_s).toBeGreaterThan(0);
    expect(ratio).toBeGreaterThan(secondShare / 1.5);
    expect(ratio).toBeLessThan(1.5 / firstShare);
  });
});
