import { describe, expect, it } from 'vitest';
import { workloadAtValue } from '../../src/main/experiments/kinds/sweep/workload-field';
import { checkSweepShape, checkSweepWorkload, sweepDefaultWorkload, sweepSettings } from '../../src/main/experiments/kinds/sweep/spec';
import type { SweepSpec } from '../../src/shared/contract/experiment-kinds/sweep';
import type { WorkloadDef } from '../../src/main/workload/workload-types';

const embeddings: WorkloadDef = {
  name: 'mixed',
  groups: [
    { name: 'written', items: [{ id: 'one', input: 'a text' }] },
    { name: 'batch-4', generate: { embeddings: { count: 4, inputs_per_request: 4, input_tokens: 64, seed: 12 } } },
    { name: 'batch-16', generate: { embeddings: { count: 2, inputs_per_request: 16, input_tokens: 32 } } },
  ],
};
const spec = (field: string, values: string[]) => ({ kind: 'sweep', model: 'demo:q8_0', vary: { field, values } }) as SweepSpec;

describe('a sweep of the embeddings batch', () => {
  it('sets every embeddings generator to the value and leaves the written items out, whose batch is fixed', () => {
    const at8 = workloadAtValue('inputs_per_request', embeddings, '8');
    expect(at8.name).toBe('mixed (inputs_per_request=8)');
    expect(at8.groups.map((group) => group.name)).toEqual(['batch-4', 'batch-16']);
    expect(at8.groups.map((group) => group.generate)).toEqual([
      { embeddings: { count: 4, inputs_per_request: 8, input_tokens: 64, seed: 12 } },
      { embeddings: { count: 2, inputs_per_request: 8, input_tokens: 32 } },
    ]);
    // The experiment's own workload is untouched: each value gets its copy.
    expect(embeddings.groups[1]!.generate).toEqual({ embeddings: { count: 4, inputs_per_request: 4, input_tokens: 64, seed: 12 } });
  });

  it('applies no server setting, runs the built-in embeddings by default, and refuses what cannot be a batch', () => {
    expect(sweepSettings(spec('inputs_per_request', ['1', '4']))).toEqual([]);
    expect(sweepSettings(spec('parallelSlots', ['1', '4']))).toEqual([
      { label: "the sweep's", settings: ['parallelSlots=1'] },
      { label: "the sweep's", settings: ['parallelSlots=4'] },
    ]);
    expect(sweepDefaultWorkload(spec('inputs_per_request', ['1', '4']), 'chat-short')).toBe('embeddings');
    expect(sweepDefaultWorkload(spec('parallelSlots', ['1', '4']), 'chat-short')).toBe('chat-short');
    for (const [values, message] of [
      [['1', '0'], /"0" is not a whole number of inputs from 1 to 2048/],
      [['1', '2049'], /"2049" is not a whole number/],
      [['1', '2.5'], /"2.5" is not a whole number/],
      [['4', '04'], /a value is given twice/],
    ] as const)
      expect(() => checkSweepShape(spec('inputs_per_request', [...values]))).toThrow(message);
    const chat: WorkloadDef = { name: 'chat-short', groups: [{ name: 'g', items: [{ id: 'a', prompt: 'hi' }] }] };
    expect(() => checkSweepWorkload(spec('inputs_per_request', ['1', '4']), chat)).toThrow(
      /needs a workload that generates embeddings requests .*chat-short has none/,
    );
    expect(() => checkSweepWorkload(spec('parallelSlots', ['1', '4']), chat)).not.toThrow();
  });
});
