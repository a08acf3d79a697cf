import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { WindowCooldown } from '../../src/main/experiments/window-cooldown';
import { checkExperimentShape } from '../../src/main/services/experiment-spec';
import { cooldownLine } from '../../src/shared/cooldown-line';
import { settleExperiment } from '../../src/main/experiments/experiment-inputs';
import { openDatabase } from '../../src/main/store/database';
import { ExperimentStore } from '../../src/main/store/experiment-store';
import { useTempDirs } from '../support/temp';
import { experimentSpecFromArgs } from '../../src/main/cli/commands/experiment';
import { sharedProtocolFields } from '../support/experiment-result';

// The nvidia-smi stand-in, replaying lines constructed from its documented format (test/fixtures/nvidia-smi/README.md).
const standIn = path.join(import.meta.dirname, '..', 'fixtures', 'nvidia-smi', 'bin', 'nvidia-smi');
const tempDir = useTempDirs();

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

describe('the cooldown on record', () => {
  it('adds every wait to the experiment result as it settles, and the table says how the windows started', async () => {
    const db = openDatabase(path.join(tempDir(), 'experiments.db'));
    const experiments = new ExperimentStore(db);
    const id = experiments.create('sweep', { cooldown: { timeout_s: 5 } });
    const cooldown = await WindowCooldown.begin(5, standIn);
    const result = await settleExperiment({ experiments, cooldown }, id, async () => {
      for (let window = 0; window < 3; window++) await cooldown.beforeWindow();
      return {
        experiment_id: id,
        kind: 'sweep',
        status: 'completed',
        protocol: sharedProtocolFields('sweep'),
        conditions: [],
        verdicts: [],
        recommendation: { choice: null, reason: 'none', excluded: [] },
      };
    });
    expect(result.cooldown_waits).toHaveLength(2);
    expect(experiments.get(id)!.result!.cooldown_waits).toEqual(result.cooldown_waits);
    expect(cooldownLine(result.cooldown_waits!)).toMatch(/^cooldown: 2 waits, 2 back at the idle baseline \(longest \d+\.\d s\)$/);
    db.close();
  });

  it('names windows that started warm and waits that were skipped', () => {
    expect(
      cooldownLine([
        { reached: true, waited_ms: 12_300, reason: null },
        { reached: false, waited_ms: 60_000, reason: 'GPU 0 at 71 °C, idle 45 °C' },
      ]),
    ).toBe('cooldown: 2 waits, 1 back at the idle baseline (longest 60.0 s); 1 started warm at the timeout (GPU 0 at 71 °C, idle 45 °C)');
    expect(cooldownLine([{ reached: null, waited_ms: 0, reason: 'no GPU (nvidia-smi not found)' }])).toBe(
      'cooldown: not waited (no GPU (nvidia-smi not found))',
    );
  });
});
