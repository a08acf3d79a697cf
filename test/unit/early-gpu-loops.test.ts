import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EarlyGpuLoops, GpuSampler } from '../../src/main/telemetry/gpu-sampler';

// The constructed nvidia-smi stand-in (test/fixtures/nvidia-smi), run as a process the way nvidia-smi would be.
const standIn = path.resolve('test/fixtures/nvidia-smi/bin/nvidia-smi');

/** This process's own nvidia-smi loops (stand-in processes started with -lms), by pid. */
function ownLoops(): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent === process.pid && args.some((arg) => arg === standIn) && args.includes('-lms')) pids.push(Number(entry));
    } catch {
      // Ended while scanning.
    }
  }
  return pids.sort((a, b) => a - b);
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean, ms = 5000): Promise<void> {
  for (const started = performance.now(); !condition() && performance.now() - started < ms;) await pause(20);
}

const started: { stop(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((item) => item.stop()));
  delete process.env.FAKE_SMI_MODE;
});

describe('nvidia-smi loops begun while a server loads', () => {
  it('are taken over by the run’s sampler: no new process, and no reading from before the sampler began', async () => {
    const early = EarlyGpuLoops.begin(100, standIn)!;
    started.push(early);
    await until(() => ownLoops().length === 2);
    const begun = ownLoops();
    expect(begun).toHaveLength(2);
    // Readings are printed meanwhile (the stand-in prints one at once, then one per interval).
    await pause(300);

    const origin = performance.now();
    const sampler = new GpuSampler(() => performance.now() - origin, 100, standIn, undefined, null, early);
    started.push(sampler);
    sampler.start();
    expect([...sampler.pids()].sort((a, b) => a - b)).toEqual(begun);
    await until(() => sampler.samples.length >= 2 && sampler.processVram.length >= 1);
    expect(sampler.samples.length).toBeGreaterThanOrEqual(2);
    expect(ownLoops()).toEqual(begun);
    // Placed by the stand-in's own timestamps on the sampler's clock: none of the readings printed in the 300 ms
    // before it began (one taken just before may arrive just after, within an interval).
    expect(Math.min(...sampler.samples.map((sample) => sample.t))).toBeGreaterThan(-100);
    await sampler.stop();
    await until(() => ownLoops().length === 0);
    expect(ownLoops()).toEqual([]);
  });

  it('are stopped where no sampler took them over (the server never became ready)', async () => {
    const early = EarlyGpuLoops.begin(100, standIn)!;
    await until(() => ownLoops().length === 2);
    expect(ownLoops()).toHaveLength(2);
    await early.stop();
    await until(() => ownLoops().length === 0);
    expect(ownLoops()).toEqual([]);
  });

  it('pass a driver failure printed before the takeover to the sampler at once', async () => {
    process.env.FAKE_SMI_MODE = 'nvml-failure';
    const early = EarlyGpuLoops.begin(100, standIn)!;
    started.push(early);
    // The stand-in prints the failure and exits, as nvidia-smi does without a working driver.
    await until(() => ownLoops().length === 0);
    await pause(100);
    const sampler = new GpuSampler(() => performance.now(), 100, standIn, undefined, null, early);
    started.push(sampler);
    sampler.start();
    expect(sampler.unavailableReason).toMatch(/nvidia-smi failed: Failed to initialize NVML/);
  });

  it('are not begun without nvidia-smi', () => {
    expect(EarlyGpuLoops.begin(100, null)).toBeNull();
  });
});
