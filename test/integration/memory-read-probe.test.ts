import { describe, expect, it } from 'vitest';
import { probeMemoryRead } from '../../src/main/metrics/memory-read-probe';

// With the integration files, which run one at a time: beside the parallel unit tests the probe would measure them.
describe('the memory-read probe', () => {
  it('measures a positive read bandwidth, stable within a factor of 1.5 across two probes', { timeout: 60_000 }, async () => {
    const first = await probeMemoryRead(2, { bufferBytes: 256 * 2 ** 20, reps: 9 });
    const second = await probeMemoryRead(2, { bufferBytes: 256 * 2 ** 20, reps: 9 });
    console.log(`[memory-read probe] 2 threads: ${first.gb_per_s.toFixed(1)} GB/s, then ${second.gb_per_s.toFixed(1)} GB/s`);
    expect(first.gb_per_s).toBeGreaterThan(0);
    expect(second.gb_per_s).toBeGreaterThan(0);
    expect(second.gb_per_s / first.gb_per_s).toBeGreaterThan(1 / 1.5);
    expect(second.gb_per_s / first.gb_per_s).toBeLessThan(1.5);
  });
});
