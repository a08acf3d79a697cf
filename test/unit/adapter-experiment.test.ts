import { describe, expect, it } from 'vitest';
import type { VerdictRow } from '../../src/shared/contract/experiments';
import { loraAdapterEntries, loraAdapterEntry } from '../../src/shared/lora-adapter-entry';
import {
  adapterConditions,
  adapterPerplexityArgs,
  adapterSettings,
  loraMib,
  swappedChoice,
  servingPairs,
  swappedFiles,
} from '../../src/main/experiments/kinds/adapter/conditions';
import { adapterConditionsOf } from '../../src/main/experiments/kinds/adapter/spec';
import { adapterGates, recommendAdapter } from '../../src/main/experiments/kinds/adapter/recommend-adapter';
import type { QuantConstraints } from '../../src/main/experiments/recommend';
import { conditionResult } from '../support/condition-result';

const none: QuantConstraints = { vramBudgetMib: null, minAgreement: null, minAcceptance: null, slo: null };

function verdict(b: string, metric: string, value: VerdictRow['verdict'], difference = 0): VerdictRow {
  return { metric, a: 'base', b, a_value: 10, b_value: 10 + difference, difference, ci: [difference - 1, difference + 1], verdict: value };
}

describe('the adapter experiment: its conditions', () => {
  it('puts the base model first and names each adapter by its file and, where not 1, its scale', () => {
    const checked = adapterConditions([{ file: 'demo:lora' }, { file: 'demo:lora', scale: 0.5 }, { file: '/m/my-tune.GGUF', scale: 1 }]);
    expect(checked).toEqual({
      conditions: [
        { name: 'base', file: null, scale: 0, swapped: false },
        { name: 'demo-lora', file: 'demo:lora', scale: 1, swapped: false },
        { name: 'demo-lora@0.5', file: 'demo:lora', scale: 0.5, swapped: false },
        { name: 'my-tune', file: '/m/my-tune.GGUF', scale: 1, swapped: false },
      ],
    });
    // Two files of one name in different folders stay apart.
    const twins = adapterConditions([{ file: '/a/tune.gguf' }, { file: '/b/tune.gguf' }]);
    expect('conditions' in twins && twins.conditions.map((condition) => condition.name)).toEqual(['base', 'tune', 'tune (2)']);
  });

  it("reads a profile's adapter list: comma-separated, a scale only where a number follows the last @", () => {
    expect(loraAdapterEntries(' demo:lora, /m/models@2/tune.gguf@0.5 ,/a@b.gguf, /c.gguf@-1.5e0,')).toEqual([
      { file: 'demo:lora' },
      { file: '/m/models@2/tune.gguf', scale: 0.5 },
      { file: '/a@b.gguf' },
      { file: '/c.gguf', scale: -1.5 },
    ]);
    expect(loraAdapterEntries('')).toEqual([]);
  });

  it('serves adapters swapped on one server that loads each file once, each condition asking for its own and every other at 0', () => {
    const adapters = [{ file: 'demo:lora' }, { file: 'demo:lora', scale: 0.5 }, { file: '/m/tune.gguf', scale: 2 }];
    const both = adapterConditions(adapters, 'both');
    if (!('conditions' in both)) throw new Error(both.problem);
    expect(both.conditions.map((condition) => [condition.name, condition.swapped])).toEqual([
      ['base', false],
      ['demo-lora', false],
      ['demo-lora swapped', true],
      ['demo-lora@0.5', false],
      ['demo-lora@0.5 swapped', true],
      ['tune@2', false],
      ['tune@2 swapped', true],
    ]);
    const files = swappedFiles(both.conditions);
    expect(files).toEqual(['demo:lora', '/m/tune.gguf']);
    const swapped = both.conditions.filter((condition) => condition.swapped);
    // One server holds every adapter at its loaded scale 1; each request chooses.
    for (const condition of swapped)
      expect(adapterSettings(condition, files)).toEqual(['loraAdapter=demo:lora,/m/tune.gguf', 'loraScale=1']);
    expect(swapped.map((condition) => swappedChoice(condition, files).lora)).toEqual([
      [
        { id: 0, scale: 1 },
        { id: 1, scale: 0 },
      ],
      [
        { id: 0, scale: 0.5 },
        { id: 1, scale: 0 },
      ],
      [
        { id: 0, scale: 0 },
        { id: 1, scale: 2 },
      ],
    ]);
    // Its own server: the adapter alone, at its scale; the base model: none.
    expect(adapterSettings(both.conditions[3]!, files)).toEqual(['loraAdapter=demo:lora', 'loraScale=0.5']);
    expect(adapterSettings(both.conditions[0]!, files)).toEqual([]);
    // Each adapter served both ways is also compared with itself: its own server against the swapping one.
    expect(servingPairs(both.conditions)).toEqual([
      ['demo-lora', 'demo-lora swapped'],
      ['demo-lora@0.5', 'demo-lora@0.5 swapped'],
      ['tune@2', 'tune@2 swapped'],
    ]);
    const only = adapterConditions(adapters, 'swapped');
    expect('conditions' in only && only.conditions.map((condition) => condition.name)).toEqual([
      'base',
      'demo-lora swapped',
      'demo-lora@0.5 swapped',
      'tune@2 swapped',
    ]);
    // Served one way only, nothing to pair.
    expect('conditions' in only && servingPairs(only.conditions)).toEqual([]);
    expect(() => adapterConditionsOf({ adapters, serving: 'shared' } as never)).toThrow(
      /serving must be own, swapped or both, got "shared"/,
    );
  });

  it('refuses no adapter, a blank file, a scale out of range or not a number, and one adapter at one scale twice', () => {
    expect(adapterConditions([])).toEqual({ problem: expect.stringMatching(/^name one adapter or more/) });
    expect(adapterConditions([{ file: '  ' }])).toEqual({ problem: 'adapter 1 names no file' });
    for (const scale of [5, -4.5, Number.NaN, Number.POSITIVE_INFINITY])
      expect(adapterConditions([{ file: 'demo:lora', scale }])).toEqual({
        problem: expect.stringMatching(/scale must be a number from -4 to 4/),
      });
    expect(adapterConditions([{ file: 'demo:lora' }, { file: 'demo:lora', scale: 1 }])).toEqual({
      problem: 'adapter demo:lora at scale 1 is named twice',
    });
    expect(() => adapterConditionsOf({ adapters: 'demo:lora' } as never)).toThrow(/adapters must be a list/);
    expect(() => adapterConditionsOf({ adapters: [] } as never)).toThrow(/^adapters: name one adapter or more/);
  });

  it('gives each condition its server settings and llama-perplexity flags, the base model none', () => {
    const [base, scaled] = (adapterConditions([{ file: 'demo:lora', scale: 0.5 }]) as { conditions: never[] }).conditions;
    expect(adapterSettings(base!)).toEqual([]);
    expect(adapterSettings(scaled!)).toEqual(['loraAdapter=demo:lora', 'loraScale=0.5']);
    expect(adapterPerplexityArgs(base!, null)).toEqual([]);
    expect(adapterPerplexityArgs(scaled!, '/d/demo-lora.gguf')).toEqual(['--lora-scaled', '/d/demo-lora.gguf:0.5']);
  });

  it("reads the adapter's memory from the server's LoRA buffer lines, summed over devices; none without one", () => {
    // The keys the log reader makes of "llama_adapter_lora_init_impl: CPU_Mapped LoRA buffer size = 0.11 MiB" (captured, demo adapter) and a CUDA build's (constructed).
    expect(loraMib({ 'CPU_Mapped model': 45.97, 'CPU_Mapped LoRA model': 0.11, 'CPU KV': 16 })).toBeCloseTo(0.11, 6);
    expect(loraMib({ 'CUDA0 LoRA model': 12.5, 'CUDA1 LoRA model': 12.5, 'CUDA0 model': 4000 })).toBe(25);
    expect(loraMib({ 'CPU_Mapped model': 45.97, 'CPU KV': 16 })).toBeNull();
    expect(loraMib(null)).toBeNull();
  });

  it('takes FILE or FILE@SCALE from the CLI and the form alike', () => {
    expect(loraAdapterEntry('demo:lora')).toEqual({ file: 'demo:lora' });
    expect(loraAdapterEntry('/m/a@b/tune.gguf@0.25')).toEqual({ file: '/m/a@b/tune.gguf', scale: 0.25 });
    expect(loraAdapterEntry('tune.gguf@')).toEqual({ file: 'tune.gguf', scale: Number.NaN });
    expect(loraAdapterEntry('@2')).toEqual({ file: '@2' });
  });
});

describe('the adapter experiment: its recommendation', () => {
  const base = () => conditionResult('base', { tpot: 10 });

  it('leaves token agreement and KLD out of the gates unless a threshold is set: an adapter is meant to change the answers', () => {
    const moved = conditionResult('tune', {
      token_agreement: { mean: 0.2, exact_match_rate: 0, first_divergence_index_mean: 3, items: 8 },
      kld_mean: 2,
    });
    expect(adapterGates([base(), moved], none).map((gate) => gate.name)).toEqual(['acceptance']);
    expect(recommendAdapter([base(), moved], [], none).choice).toBe('tune');
    const strict = recommendAdapter([base(), moved], [], { ...none, minAgreement: 0.9 });
    expect(strict.gates!.map((gate) => gate.name)).toEqual(['acceptance', 'token agreement']);
    expect(strict.choice).toBeNull();
    expect(strict.reason).toMatch(/^No adapter passes every gate: tune \(token agreement failed/);
  });

  it('picks the adapter with the lowest TPOT p50 among those that pass, never the base model, and says what it costs', () => {
    const slow = conditionResult('slow', { tpot: 14, lora_mib: 40, server_load_ms: 900 });
    const quick = conditionResult('quick', { tpot: 11, lora_mib: 20, server_load_ms: 700 });
    const broken = conditionResult('broken', { tpot: 10.5, acceptance: { accepted: 5, judged: 32 } });
    const baseline = { ...base(), server_load_ms: 650 };
    const result = recommendAdapter([baseline, slow, quick, broken], [verdict('quick', 'tpot_ms p50', 'slower', 1)], none);
    expect(result.choice).toBe('quick');
    expect(result.reason).toMatch(
      /^quick passes every gate\. Lowest TPOT p50 of the 2 that pass \(slow 14\.00 ms, quick 11\.00 ms; no verdict compares/,
    );
    expect(result.reason).toMatch(
      /Against the base model: tpot_ms p50 slower \(\+1\.00 ms \[0\.00, 2\.00\]\); adapter weights 20\.00 MiB; load 700 ms against 650 ms\./,
    );
    expect(result.excluded).toEqual([{ name: 'broken', reason: expect.stringMatching(/^acceptance failed: 5\/32/) }]);
    // The base model is the reference: even the fastest, it is not the choice.
    expect(recommendAdapter([conditionResult('base', { tpot: 1 }), slow], [], none).choice).toBe('slow');
  });

  it('says, for an adapter served both ways, what swapping it in per request costs against its own server', () => {
    const own = conditionResult('tune', { tpot: 12 });
    const swapped = conditionResult('tune swapped', { tpot: 11 });
    const pair = { ...verdict('tune swapped', 'tpot_ms p50', 'faster', -1), a: 'tune' };
    const result = recommendAdapter(
      [base(), own, swapped],
      [verdict('tune swapped', 'tpot_ms p50', 'no significant difference'), pair],
      none,
    );
    expect(result.choice).toBe('tune swapped');
    expect(result.reason).toMatch(/no verdict compares different adapters with each other/);
    expect(result.reason).toMatch(
      /Its own server against swapping it in per request \(tune → tune swapped\): tpot_ms p50 faster \(-1\.00 ms/,
    );
    // Served one way, no such line.
    expect(recommendAdapter([base(), own], [], none).reason).not.toMatch(/swapping it in/);
  });

  it('ranks by the objective given: TTFT p50, or the smallest adapter weights, each said in the reason', () => {
    const light = conditionResult('light', { tpot: 12, ttft: 90, lora_mib: 8 });
    const swift = conditionResult('swift', { tpot: 11, ttft: 40, lora_mib: 30 });
    const heavy = conditionResult('heavy', { tpot: 10, ttft: 60, lora_mib: 64 });
    const adapters = [base(), light, swift, heavy];
    expect(recommendAdapter(adapters, [], none)).toMatchObject({
      choice: 'heavy',
      objective: 'lowest TPOT p50 among the adapters that pass every gate, then TTFT p50',
    });
    const byTtft = recommendAdapter(adapters, [], { ...none, objective: 'ttft' });
    expect(byTtft).toMatchObject({ choice: 'swift', objective: 'lowest TTFT p50 among the adapters that pass every gate, then TPOT p50' });
    expect(byTtft.reason).toMatch(/Lowest TTFT p50 of the 3 that pass \(light 90\.00 ms, swift 40\.00 ms, heavy 60\.00 ms;/);
    const byMemory = recommendAdapter(adapters, [], { ...none, objective: 'memory' });
    expect(byMemory.choice).toBe('light');
    expect(byMemory.reason).toMatch(/Smallest adapter weights of the 3 that pass \(light 8\.00 MiB, swift 30\.00 MiB, heavy 64\.00 MiB;/);
    // An adapter whose memory the log did not give ranks after every one it did.
    const unknown = conditionResult('unknown', { tpot: 1, ttft: 1, lora_mib: null });
    expect(recommendAdapter([base(), unknown, heavy], [], { ...none, objective: 'memory' }).choice).toBe('heavy');
  });

  it('no adapter measured: no choice, said so', () => {
    expect(recommendAdapter([base()], [], none)).toMatchObject({ choice: null, reason: 'No adapter was measured.' });
  });
});
