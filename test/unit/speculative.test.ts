import { describe, expect, it } from 'vitest';
import { buildLlamaServerArgs, defaultProfile } from '../../src/main/engines/llamacpp/launch-args';
import { applySettings, validateProfile } from '../../src/main/engines/llamacpp/profile-rules';
import { missingDraftReason, speculativeSummary } from '../../src/main/metrics/run-summary';
import { measuredRequest, summarizeCompleted } from '../support/measured-request';
import { experimentSpecFromArgs } from '../../src/main/cli/commands/experiment';
import { speculativeRecommendation } from '../../src/main/experiments/kinds/speculative/protocol';
import type { ConditionResult, GreedyEquivalence, VerdictRow } from '../../src/shared/contract/experiments';

describe('speculative decoding: the profile', () => {
  it('launches a plain draft model under draft-simple with every limit explicit, and nothing without one', () => {
    const plain = buildLlamaServerArgs('/m.gguf', 8080, defaultProfile());
    expect(plain).not.toContain('-md');
    expect(plain).not.toContain('--spec-type');
    const drafted = applySettings(defaultProfile(), ['draftModel=demo:q4_k_m', 'spec-draft-n-max=8', 'draftPMin=0.5']);
    const args = buildLlamaServerArgs('/m.gguf', 8080, drafted, '/d.gguf');
    const after = (flag: string) => args[args.indexOf(flag) + 1];
    expect(after('-md')).toBe('/d.gguf');
    expect(after('--spec-type')).toBe('draft-simple');
    expect(after('--spec-draft-n-max')).toBe('8');
    expect(after('--spec-draft-n-min')).toBe('0');
    expect(after('--spec-draft-p-min')).toBe('0.5');
    expect(after('-ngld')).toBe('999');
    expect(applySettings(drafted, ['draftModel=none']).draftModel).toBeNull();
  });

  it('names the field of each bad draft setting, and refuses the draft model and removed draft flags as extra flags', () => {
    const bad = { ...defaultProfile(), draftModel: 'demo:q4_k_m', draftMax: 0, draftMin: 2, draftPMin: 1.5 };
    const fields = validateProfile(bad).map((problem) => problem.field);
    expect(fields).toEqual(expect.arrayContaining(['draftMax', 'draftPMin', 'draftMin']));
    expect(validateProfile({ ...defaultProfile(), draftModel: 'demo:q4_k_m' }, undefined, 'vllm').map((p) => p.field)).toContain(
      'draftModel',
    );
    for (const flags of [
      ['-md', '/x.gguf'],
      ['--draft-max', '4'],
      ['--draft-min', '1'],
      ['-ngld', '10'],
    ]) {
      const problems = validateProfile({ ...defaultProfile(), extraFlags: flags });
      expect(
        problems.map((problem) => problem.field),
        flags.join(' '),
      ).toContain('extraFlags');
    }
    // Draft-free speculation stays an extra flag; beside a draft model it would override the profile's limits.
    expect(validateProfile({ ...defaultProfile(), extraFlags: ['--spec-type', 'ngram-simple', '--spec-draft-n-max', '4'] })).toEqual([]);
    const overriding = validateProfile({ ...defaultProfile(), draftModel: 'demo:q4_k_m', extraFlags: ['--spec-draft-n-max', '4'] });
    expect(overriding.map((problem) => problem.message).join()).toMatch(/would override the draft model/);
    expect(validateProfile({ ...defaultProfile(), extraFlags: ['-md', '/x.gguf'] })[0]!.message).toMatch(/profile field draftModel/);
  });
});

describe('speculative decoding: the figures', () => {
  const drafted = (seq: number, draft: number | null, accepted: number | null, outputTokens = 20) =>
    measuredRequest(seq, { draft_tokens: draft, draft_accepted_tokens: accepted, output_tokens: outputTokens });

  it('pools accepted over drafted tokens and keeps each request its own rate; a request without counts is not a zero', () => {
    const speculative = speculativeSummary([drafted(0, 10, 10), drafted(1, 30, 15), drafted(2, null, null, 1)])!;
    expect(speculative.drafted_tokens).toBe(40);
    expect(speculative.accepted_tokens).toBe(25);
    expect(speculative.acceptance_rate).toBeCloseTo(25 / 40, 12);
    expect(speculative.acceptance_rate_per_request.mean).toBeCloseTo((1 + 0.5) / 2, 12);
    expect(speculative.acceptance_rate_per_request.min).toBe(0.5);
    expect(speculative.requests_with_draft).toBe(2);
    expect(speculative.requests_without_draft).toBe(1);
    expect(speculativeSummary([drafted(0, null, null)])).toBeNull();
    // Drafted nothing at all: no rate, rather than a rate of 0.
    expect(speculativeSummary([drafted(0, 0, 0)])!.acceptance_rate).toBeNull();
  });

  it('fails a run that asked for a draft when no request long enough to draft reported counts', () => {
    expect(missingDraftReason('demo:q4_k_m', [drafted(0, null, null), drafted(1, null, null)])).toMatch(
      /none of the 2 successful requests reported draft counts/,
    );
    expect(missingDraftReason('demo:q4_k_m', [drafted(0, null, null), drafted(1, 4, 3)])).toBeNull();
    // One-token answers give the server nothing to draft: no verdict either way.
    expect(missingDraftReason('demo:q4_k_m', [drafted(0, null, null, 1)])).toBeNull();
    const summary = summarizeCompleted([drafted(0, 8, 6), { ...drafted(1, 8, 2), warmup: true }]);
    expect(summary.speculative?.drafted_tokens).toBe(8);
  });
});

describe('speculative decoding: the experiment', () => {
  it('builds the spec from flags and says what is wrong with a bad one', () => {
    const { spec } = experimentSpecFromArgs(['speculative', '--model', 'demo:f16', '--draft', 'demo:q4_k_m', '--draft-max', '4,8']);
    expect(spec).toMatchObject({ kind: 'speculative', draftModel: 'demo:q4_k_m', draftMax: [4, 8] });
    expect(() => experimentSpecFromArgs(['speculative', '--model', 'demo:f16'])).toThrow(/needs --draft/);
    // The kind's former name still works on the command line.
    expect(experimentSpecFromArgs(['spec', '--model', 'demo:f16', '--draft', 'demo:q4_k_m']).spec.kind).toBe('speculative');
    expect(() => experimentSpecFromArgs(['constructor', '--model', 'demo:f16'])).toThrow(/Unknown experiment "constructor"/);
    // No name at all is asked for by name, with the list.
    expect(() => experimentSpecFromArgs([])).toThrow(/^Name the experiment; the experiments are quant, .*speculative/);
    expect(() => experimentSpecFromArgs(['speculative', '--model', 'demo:f16', '--draft', 'd', '--draft-max', '4,0'])).toThrow(/draft-max/);
    expect(() => experimentSpecFromArgs(['speculative', '--model', 'demo:f16', '--draft', 'd', '--draft-max', '4,4'])).toThrow(/twice/);
    expect(() => experimentSpecFromArgs(['sweep', '--model', 'm', '--vary', 'threads=1,2', '--draft', 'd'])).toThrow(
      /--draft is for experiment speculative only/,
    );
  });

  const condition = (name: string, tokensPerS: number): ConditionResult =>
    ({ name, throughput: { output_tokens_per_s: tokensPerS }, speculative: { acceptance_rate: 0.8 } }) as unknown as ConditionResult;
  const verdict = (b: string, result: VerdictRow['verdict']): VerdictRow =>
    ({ metric: 'tpot_ms p50', a: 'spec off', b, verdict: result }) as VerdictRow;
  const equivalence = (differing: string[]): GreedyEquivalence => ({
    rule: '',
    items: 4,
    noise_floor: { mean: 1, exact_match_rate: 1, first_divergence_index_mean: null, items: 4 },
    floor_mismatches: [],
    settings: ['draft-max 4', 'draft-max 8'].map((name) => ({
      name,
      agreement: { mean: 1, exact_match_rate: 1, first_divergence_index_mean: null, items: 4 },
      mismatches: differing.includes(name) ? ['g/1'] : [],
      beyond_floor: differing.includes(name) ? ['g/1'] : [],
      equivalent: !differing.includes(name),
    })),
  });
  const conditions = [condition('spec off', 100), condition('draft-max 4', 150), condition('draft-max 8', 180)];

  it('recommends a draft setting only when it is shown faster and its greedy output is unchanged', () => {
    const faster = [verdict('draft-max 4', 'faster'), verdict('draft-max 8', 'faster')];
    expect(speculativeRecommendation(conditions, faster, equivalence([])).choice).toBe('draft-max 8');
    // The faster one changed an output: the other is chosen, and the reason for leaving it out names the item.
    const changed = speculativeRecommendation(conditions, faster, equivalence(['draft-max 8']));
    expect(changed.choice).toBe('draft-max 4');
    expect(changed.excluded[0]).toMatchObject({ name: 'draft-max 8', reason: expect.stringMatching(/g\/1/) });
    const unproven = speculativeRecommendation(conditions, [verdict('draft-max 4', 'no significant difference')], equivalence([]));
    expect(unproven.choice).toBe('spec off');
    expect(unproven.excluded.map((item) => item.name)).toEqual(['draft-max 4', 'draft-max 8']);
  });
});
