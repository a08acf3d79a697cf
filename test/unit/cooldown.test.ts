import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { GpuSample } from '../../src/shared/contract/telemetry';
import { coolDown, coolDownBetweenWindows, idleStateOf, readGpusOnce } from '../../src/main/telemetry/cooldown';

// The nvidia-smi stand-in, replaying lines constructed from its documented format (test/fixtures/nvidia-smi/README.md).
const standIn = path.join(import.meta.dirname, '..', 'fixtures', 'nvidia-smi', 'bin', 'nvidia-smi');

const reading = (temperatureC: number, smClockMhz: number, memClockMhz = 2619): GpuSample => ({
  t: 0,
  index: 0,
  uuid: null,
  name: 'NVIDIA H100 80GB HBM3',
  memoryUsedMib: 1,
  memoryTotalMib: 2,
  utilizationPct: 0,
  memoryUtilizationPct: 0,
  temperatureC,
  powerW: 70,
  smClockMhz,
  pstate: 'P0',
  memClockMhz,
  throttleReasons: 1,
});

/** A fake clock that moves only when the cooldown sleeps. */
function fakeTime() {
  let t = 0;
  return { now: () => t, sleep: async (ms: number) => void (t += ms) };
}

describe('cooldown between windows', () => {
  const baseline = idleStateOf([reading(35, 345, 2619)]);

  it('waits until temperature and clocks are back at the idle baseline', async () => {
    const queue = [reading(70, 1980), reading(50, 1980), reading(37, 1980), reading(37, 345)];
    const time = fakeTime();
    const result = await coolDown({ readGpus: async () => [queue.shift()!], baseline, timeoutMs: 60_000, pollMs: 1000, ...time });
    expect(result).toEqual({ reached: true, waited_ms: 3000, reason: null });
  });

  it('gives up at the timeout and says what was still warm', async () => {
    const time = fakeTime();
    const result = await coolDown({ readGpus: async () => [reading(36, 1980)], baseline, timeoutMs: 2500, pollMs: 1000, ...time });
    expect(result.reached).toBe(false);
    expect(result.waited_ms).toBe(2500);
    expect(result.reason).toBe('timed out: GPU 0 SM clock 1980 MHz (idle 345 MHz)');
  });

  it('is a no-op with the reason on a machine without a GPU', async () => {
    expect(await coolDownBetweenWindows(baseline, 10_000, null)).toEqual({
      reached: null,
      waited_ms: 0,
      reason: 'no GPU (nvidia-smi not found): CPU temperature and clocks are not tracked, no cooldown',
    });
  });

  it('reads every GPU once with the sampler query (stand-in)', async () => {
    const gpus = await readGpusOnce(standIn);
    expect(gpus?.[0]).toMatchObject({ index: 0, temperatureC: 63, smClockMhz: 2520, memClockMhz: 10501 });
  });

  it('reads without the clock fields where the driver refuses them (stand-in)', async () => {
    process.env.FAKE_SMI_MODE = 'refuse-clocks';
    try {
      expect((await readGpusOnce(standIn))?.[0]).toMatchObject({ index: 0, temperatureC: 63, smClockMhz: 2520, memClockMhz: null });
    } finally {
      delete process.env.FAKE_SMI_MODE;
    }
  });
});
