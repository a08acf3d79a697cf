import { describe, expect, it } from 'vitest';
import {
  cacheConditions,
  cachePerplexityArgs,
  cacheSettings,
  kvCacheMib,
  needsFlashAttention,
} from '../../src/main/experiments/kinds/kvcache/cache-conditions';
import { checkKvCacheShape } from '../../src/main/experiments/kinds/kvcache/spec';
import { acceptanceByGroup } from '../../src/main/experiments/kinds/kvcache/protocol';
import { parseLogFacts } from '../../src/main/engines/llamacpp/log-facts';
import { experimentSpecFromArgs } from '../../src/main/cli/commands/experiment';
import { checkExperimentShape } from '../../src/main/services/experiment-spec';
import type { RequestRow } from '../../src/main/store/run-rows';
import { checkCall } from '../../src/main/rpc/argument-validators';
import type { ExperimentSpecOf } from '../../src/shared/contract';

type KvCacheSpec = ExperimentSpecOf<'kvcache'>;

const spec = (kvCache: KvCacheSpec['kvCache']): KvCacheSpec => ({
  kind: 'kvcache',
  model: 'demo:q8_0',
  workload: '',
  repeats: 3,
  requestsPerWindow: 8,
  kvCache,
});

describe('the kvcache kind: conditions from cache types', () => {
  it('reads one type as K and V alike, K/V apart, and keeps the order: the first is the baseline', () => {
    expect(cacheConditions(['f16', 'Q8_0', 'q8_0/f16'])).toEqual({
      conditions: [
        { name: 'f16', k: 'f16', v: 'f16' },
        { name: 'q8_0', k: 'q8_0', v: 'q8_0' },
        { name: 'q8_0/f16', k: 'q8_0', v: 'f16' },
      ],
    });
  });

  it('lets nothing but a known cache type reach the server or llama-perplexity argv (attack: a flag smuggled in as a type)', () => {
    for (const smuggled of ['--log-file=/tmp/prompts', 'f16 -v', 'q8_0/--hf-token=x', 'f16\n-v'])
      expect(cacheConditions(['f16', smuggled])).toEqual({ problem: expect.stringMatching(/is not a KV cache type/) });
  });

  it('refuses one type, an unknown type, a three-part name and the same pair twice, naming the entry', () => {
    expect(cacheConditions(['f16'])).toEqual({ problem: expect.stringMatching(/two or more cache types/) });
    expect(cacheConditions(['f16', 'q9'])).toEqual({ problem: expect.stringMatching(/"q9" is not a KV cache type: use one of f32, f16/) });
    expect(cacheConditions(['f16', 'q8_0/q8_0/f16'])).toEqual({ problem: expect.stringMatching(/"q8_0\/q8_0\/f16"/) });
    expect(cacheConditions(['q8_0', 'q8_0/q8_0'])).toEqual({ problem: expect.stringMatching(/same K and V types/) });
  });

  it('turns flash attention on for every condition only when some V cache is quantized', () => {
    const withQuantizedV = (cacheConditions(['f16', 'q8_0']) as { conditions: never[] }).conditions;
    const keyOnly = (cacheConditions(['f16', 'q8_0/f16']) as { conditions: never[] }).conditions;
    expect(needsFlashAttention(withQuantizedV)).toBe(true);
    expect(needsFlashAttention(keyOnly)).toBe(false);
    expect(cacheSettings(withQuantizedV[0]!, true, 2048)).toEqual([
      'cacheTypeK=f16',
      'cacheTypeV=f16',
      'flashAttention=on',
      'contextSize=2048',
    ]);
    expect(cacheSettings(keyOnly[1]!, false, null)).toEqual(['cacheTypeK=q8_0', 'cacheTypeV=f16']);
    expect(cachePerplexityArgs(withQuantizedV[1]!, true)).toEqual(['-ctk', 'q8_0', '-ctv', 'q8_0', '-fa', 'on']);
  });
});

describe('the KV memory a server allocated, from its log', () => {
  it('sums the KV buffers of every device (captured: a two-GPU 2024 llama-server log; its own "KV self size" line says 384 MiB)', () => {
    // Captured from a public issue's pasted log (llama.cpp, 2024 format, CUDA0 + CUDA1).
    const facts = parseLogFacts([
      'llama_kv_cache_init:      CUDA0 KV buffer size =   208.00 MiB',
      'llama_kv_cache_init:      CUDA1 KV buffer size =   176.00 MiB',
      'llama_new_context_with_model: KV self size  =  384.00 MiB, K (f16):  192.00 MiB, V (f16):  192.00 MiB',
      'llama_new_context_with_model:  CUDA_Host  output buffer size =     2.90 MiB',
      'llama_new_context_with_model:      CUDA0 compute buffer size =  1166.01 MiB',
    ]);
    expect(kvCacheMib(facts.buffersMib)).toBe(384);
  });

  it("reads the pinned build's line, and says nothing (null) for a log without KV buffers", () => {
    // Constructed in the format of the pinned build's llama-kv-cache.cpp ("%s: %10s KV buffer size = %8.2f MiB").
    const facts = parseLogFacts([
      'llama_kv_cache:        CPU KV buffer size =     8.50 MiB',
      'sched_reserve:        CPU compute buffer size =    16.04 MiB',
    ]);
    expect(kvCacheMib(facts.buffersMib)).toBe(8.5);
    expect(kvCacheMib({ 'CPU_Mapped model': 45.97, 'CPU compute': 17 })).toBeNull();
    expect(kvCacheMib(undefined)).toBeNull();
  });
});

describe('acceptance per workload group', () => {
  const row = (group: string | null, accepted: number | null, error: string | null = null, warmup = 0) =>
    ({ group_name: group, accepted, error_class: error, warmup }) as RequestRow;

  it('counts checked and failed requests per group; unchecked and warm-up requests are not judged', () => {
    expect(
      acceptanceByGroup([
        row('needle', 1),
        row('needle', 0),
        row('needle', null, 'timeout'),
        row('chat', null),
        row('needle', 1, null, 1),
        row(null, 1),
      ]),
    ).toEqual({ needle: { accepted: 1, judged: 3 }, '(no group)': { accepted: 1, judged: 1 } });
  });
});

describe('a kvcache spec, from every face', () => {
  it('is checked before anything starts: the types, the context, and the fields of other kinds', () => {
    expect(() => checkExperimentShape(spec({ types: ['f16', 'q8_0'], contextSize: 4096 }))).not.toThrow();
    expect(() => checkExperimentShape(spec(null))).not.toThrow();
    expect(() => checkKvCacheShape(spec({ types: ['f16'], contextSize: null }))).toThrow(/kvCache.types: name two or more/);
    expect(() => checkKvCacheShape(spec({ types: ['f16', 'q8_0'], contextSize: 100 }))).toThrow(
      /contextSize must be a whole number of tokens from 256/,
    );
    // Another kind's field is refused by the kind's own schema at the boundary, named as the field of no kvcache spec.
    const withSweepField = { ...spec({ types: ['f16', 'q8_0'], contextSize: null }), vary: { field: 'batchSize', values: ['1', '2'] } };
    expect(() => checkCall('experiments', 'start', [withSweepField])).toThrow(/experiments.start: spec has no field "vary"/);
    expect(() => checkCall('experiments', 'start', [{ ...withSweepField, kind: 'nope' }])).toThrow(
      /spec.kind must be one of "quant", "warmcold", "sweep", "capacity", "speculative", "kvcache", "adapter", got "nope"/,
    );
    const { kvCache: _kvCache, ...shared } = withSweepField;
    expect(() => checkCall('experiments', 'start', [{ ...shared, kind: 'sweep' }])).not.toThrow();
  });

  it('builds from the CLI flags the spec the UI sends, and refuses the flags of other kinds', () => {
    const { spec: built } = experimentSpecFromArgs([
      'kvcache',
      '--model',
      'demo:q8_0',
      '--types',
      'f16, q8_0,q4_0',
      '--ctx',
      '8192',
      '--min-agreement',
      '0.95',
    ]);
    expect(built).toMatchObject({
      kind: 'kvcache',
      kvCache: { types: ['f16', 'q8_0', 'q4_0'], contextSize: 8192 },
      constraints: { minAgreement: 0.95 },
    });
    expect(() => experimentSpecFromArgs(['quant', '--model', 'demo:f16', '--types', 'f16,q8_0'])).toThrow(
      /--types is for experiment kvcache only/,
    );
    expect(() => experimentSpecFromArgs(['kvcache', '--model', 'demo:q8_0', '--quants', 'f16,q8_0'])).toThrow(/takes --types/);
    expect(() => experimentSpecFromArgs(['kvcache', '--model', 'demo:q8_0', '--types', 'f16,q7'])).toThrow(/"q7" is not a KV cache type/);
  });
});
