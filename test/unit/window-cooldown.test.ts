import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { WindowCooldown } from '../../src/main/experiments/window-cooldown';
import { checkExperimentShape } from '../../src/main/services/experiment-spec';
import { experimentSpecFromArgs } from '../../src/main/cli/commands/experiment';

// The recorded-format nvidia-smi stand-in (test/fixtures/nvidia-smi/README.md).
const standIn = path.join(import.meta.dirname, '..', 'fixtures', 'nvidia-smi', 'bin', 'nvidia-smi');

describe("an experiment's cooldown between windows", () => {
  it('skips the first window and waits before the next; the stand-in GPU is at its baseline at once', async () => {
    const cooldown = await WindowCooldown.begin(5, standIn);
    expect(cooldown.describe()).toMatchObject({ timeout_s: 5, idle_baseline: [{ index: 0, temperatureC: 63, smClockMhz: 2520 }] });
    const status: string[] = [];
    await cooldown.beforeWindow((line) => status.push(line));
    await cooldown.beforeWindow((line) => status.push(line));
    expect(cooldown.waits).toHaveLength(1);
    expect(cooldown.waits[0]!.reached).toBe(true);
    expect(status).toEqual([expect.stringMatching(/^cooldown: back at the idle baseline after \d+\.\d s$/)]);
  });

  it('is a no-op with the reason without a GPU', async () => {
    const cooldown = await WindowCooldown.begin(5, null);
    const status: string[] = [];
    await cooldown.beforeWindow();
    await cooldown.beforeWindow((line) => status.push(line));
    expect(cooldown.waits[0]).toMatchObject({ reached: null, waited_ms: 0 });
    expect(status[0]).toMatch(/^cooldown: no GPU \(nvidia-smi not found\)/);
  });

  it('is --cooldown S on the command line and cooldownS in the spec, 1 to 3600 s', () => {
    const { spec } = experimentSpecFromArgs(['warmcold', '--model', 'demo:q8_0', '--workload', 'chat-short', '--cooldown', '30']);
    expect(spec.cooldownS).toBe(30);
    expect(() => checkExperimentShape({ ...spec, cooldownS: 0.5 })).toThrow(/cooldownS must be a whole number from 1 to 3600/);
  });
});
