import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { otherBusyCores, probeMemoryRead } from '../../src/main/telemetry/memory-read-probe';

// With the integration files, which run one at a time: beside the parallel unit tests the probe would measure them.
describe('the memory-read probe', () => {
  it('measures a positive read bandwidth; of three probes, two agree within a factor of 1.5', { timeout: 60_000 }, async () => {
    const probe = () => otherBusyCores(() => probeMemoryRead(2, { bufferBytes: 256 * 2 ** 20, reps: 9 }));
    const probes = [await probe(), await probe(), await probe()];
    const cores = os.availableParallelism();
    // Other work in this machine leaves a probe a share of the cores; its two threads can read no faster than that
    // share lets them, so a pair's bound is widened by what others took while its slower probe ran.
    const share = (busy: number | null) => Math.max(0.05, (cores - Math.min(busy ?? 0, cores)) / cores);
    console.log(
      `[memory-read probe] 2 threads: ${probes.map((p) => `${p.result.gb_per_s.toFixed(1)} GB/s`).join(', ')} ` +
        `(others busy: ${probes.map((p) => p.otherBusyCores?.toFixed(2)).join(', ')} cores)`,
    );
    for (const { result } of probes) expect(result.gb_per_s).toBeGreaterThan(0);
    // A virtual machine shares its host's memory bus with neighbours it cannot see, so one probe of three may be
    // off by more (captured on CI: 34.9 then 54.7 GB/s with this machine idle); a probe whose figure is noise fails
    // this, since no two of its three would agree.
    const sorted = [...probes].sort((a, b) => a.result.gb_per_s - b.result.gb_per_s);
    const pairs = [
      [sorted[0]!, sorted[1]!],
      [sorted[1]!, sorted[2]!],
    ] as const;
    const agreeing = pairs.filter(([slow, fast]) => fast.result.gb_per_s / slow.result.gb_per_s < 1.5 / share(slow.otherBusyCores));
    expect(agreeing.length).toBeGreaterThan(0);
  });
});
