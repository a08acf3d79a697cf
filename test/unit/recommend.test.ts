import { describe, expect, it } from 'vitest';
import type { VerdictRow } from '../../src/shared/contract/experiments';
import type { Verdict } from '../../src/shared/contract/compare';
import { acceptanceUpperBound, evaluateGates, recommend, type QuantConstraints } from '../../src/main/experiments/recommend';
import { constraintsFromFlags } from '../../src/main/cli/quant-flags';
import { KV_CACHE_GATES } from '../../src/main/experiments/kinds/kvcache/kv-cache-memory';
import { conditionResult as condition } from '../support/condition-result';

const MIB = 2 ** 20;

const base = () =>
  condition('f16', { token_agreement_noise_floor: { mean: 1, exact_match_rate: 1, first_divergence_index_mean: null, items: 8 } });
const none: QuantConstraints = { vramBudgetMib: null, minAgreement: null, minAcceptance: null, slo: null };

function verdict(b: string, metric: string, value: Verdict, difference = 0): VerdictRow {
  return { metric, a: 'f16', b, a_value: 10, b_value: 10 + difference, difference, ci: [difference - 1, difference + 1], verdict: value };
}

const cell = (gates: ReturnType<typeof evaluateGates>, gate: string, name: string) =>
  gates.find((entry) => entry.name === gate)!.conditions.find((entry) => entry.name === name)!;

describe('recommendation gates', () => {
  it('prints the three default quality gates with their thresholds, and the baseline is not judged against itself', () => {
    const gates = evaluateGates([base(), condition('q8_0', { file_bytes: 500 * MIB })], none);
    expect(gates.map((gate) => gate.name)).toEqual(['acceptance', 'token agreement', 'kld']);
    expect(gates[1]!.threshold).toMatch(/≥ 90\.0 %/);
    expect(gates[2]!.threshold).toMatch(/≤ 0\.1 nats/);
    expect(gates[0]!.threshold).toMatch(/α = 0\.05/);
    for (const gate of gates) expect(cell(gates, gate.name, 'f16').status).toBe('not applicable');
    expect(cell(gates, 'token agreement', 'f16').detail).toMatch(/second pass of itself 100\.0 %/);
  });

  it('acceptance: significantly below the baseline fails with the difference and its bound; a small dip within the noise passes', () => {
    const worse = condition('q4', { acceptance: { accepted: 10, judged: 32 } });
    const dip = condition('q8', { acceptance: { accepted: 28, judged: 32 } });
    const gates = evaluateGates([base(), worse, dip], none);
    expect(cell(gates, 'acceptance', 'q4')).toMatchObject({ status: 'fail' });
    expect(cell(gates, 'acceptance', 'q4').detail).toMatch(
      /10\/32 \(31\.3 %\) vs f16 30\/32 \(93\.8 %\): -62\.5 points, one-sided 95\.0 % upper bound -\d+\.\d points < 0/,
    );
    expect(cell(gates, 'acceptance', 'q8').status).toBe('pass');
  });

  it('acceptance: 0 of 16 against 2 of 16 is not significant at 5 % (small counts, Newcombe bound)', () => {
    const { difference, upper } = acceptanceUpperBound({ accepted: 0, judged: 16 }, { accepted: 2, judged: 16 }, 0.05);
    expect(difference).toBeCloseTo(-0.125, 6);
    expect(upper).toBeGreaterThan(0);
    expect(acceptanceUpperBound({ accepted: 0, judged: 64 }, { accepted: 16, judged: 64 }, 0.05).upper).toBeLessThan(0);
  });

  it('acceptance: not applicable when neither side has checks; failed requests count in the denominator', () => {
    const gates = evaluateGates(
      [condition('f16', { acceptance: { accepted: 0, judged: 0 } }), condition('q8', { acceptance: { accepted: 0, judged: 0 } })],
      none,
    );
    expect(cell(gates, 'acceptance', 'q8')).toMatchObject({ status: 'not applicable', detail: 'no acceptance checks on either side' });
  });

  it('token agreement: below the minimum fails by so many points; missing agreement cannot pass and says why', () => {
    const low = condition('q4', { token_agreement: { mean: 0.62, exact_match_rate: 0.25, first_divergence_index_mean: 5, items: 8 } });
    const missing = condition('q2', {
      token_agreement: {
        mean: null,
        exact_match_rate: null,
        first_divergence_index_mean: null,
        items: 0,
        error: 'q2 tokenizes differently from f16: token ids are not comparable',
      },
    });
    const gates = evaluateGates([base(), low, missing], none);
    expect(cell(gates, 'token agreement', 'q4')).toMatchObject({ status: 'fail', value: 0.62 });
    expect(cell(gates, 'token agreement', 'q4').detail).toMatch(/62\.0 % is 28\.0 points below 90\.0 %/);
    expect(cell(gates, 'token agreement', 'q2')).toMatchObject({ status: 'unknown' });
    expect(cell(gates, 'token agreement', 'q2').detail).toMatch(/tokenizes differently/);
    expect(cell(evaluateGates([base(), low], { ...none, minAgreement: 0.5 }), 'token agreement', 'q4').status).toBe('pass');
  });

  it('KLD: above the maximum fails by the excess; a missing KLD cannot pass and gives the reason', () => {
    const high = condition('q4', { kld_mean: 0.25 });
    const missing = condition('q3', {
      kld_mean: null,
      kld_error: 'the evaluation text has 600 tokens; KLD at context 512 needs at least 1024',
    });
    const gates = evaluateGates([base(), high, missing], none);
    expect(cell(gates, 'kld', 'q4').detail).toMatch(/0\.250000 exceeds 0\.1 by 0\.150000 on 1400 tokens at context 512/);
    expect(cell(gates, 'kld', 'q3')).toMatchObject({ status: 'unknown' });
    expect(cell(gates, 'kld', 'q3').detail).toMatch(/cannot pass: the evaluation text has 600 tokens/);
    expect(cell(evaluateGates([base(), high], { ...none, maxKld: 0.3 }), 'kld', 'q4').status).toBe('pass');
  });

  it('a gate switched off is printed as off and passes nobody silently into failure', () => {
    const gates = evaluateGates([base(), condition('q3', { kld_mean: null, kld_error: 'llama-perplexity not found beside the server' })], {
      ...none,
      disabledGates: ['kld'],
    });
    expect(gates.find((gate) => gate.name === 'kld')!.threshold).toMatch(/^off/);
    expect(cell(gates, 'kld', 'q3').status).toBe('not applicable');
  });

  it('SLO: judged on p95 only where n supports it; "n too small" blocks instead of passing', () => {
    const slo = { ...none, slo: { ttft_ms: 200 } };
    const fine = condition('q8', { ttft: 100 });
    const slow = condition('q4', { ttft: 200 });
    const few = condition('q2', { n: 12, ttft: 50 });
    const gates = evaluateGates([base(), fine, slow, few], slo);
    expect(cell(gates, 'SLO ttft_ms p95', 'q8')).toMatchObject({ status: 'pass', value: 150 });
    expect(cell(gates, 'SLO ttft_ms p95', 'q4').detail).toMatch(/300\.0 ms misses 200 ms by 100\.0 ms \(n 32\)/);
    expect(cell(gates, 'SLO ttft_ms p95', 'q2')).toMatchObject({ status: 'unknown' });
    expect(cell(gates, 'SLO ttft_ms p95', 'q2').detail).toMatch(/n too small: 12 requests, p95 needs 20/);
    const result = recommend([base(), fine, slow, few], [], slo);
    expect(result.excluded.find((item) => item.name === 'q2')!.reason).toMatch(/SLO ttft_ms p95 cannot pass: n too small/);
  });

  it("VRAM budget: the server's own memory against the budget, the baseline included; no telemetry cannot pass", () => {
    const gates = evaluateGates(
      [
        condition('f16', { vram: { baseline_mib: 0, peak_mib: 9000, server_mib: 8000 } }),
        condition('q4', { vram: { baseline_mib: 0, peak_mib: 5000, server_mib: 4000 } }),
        condition('q2'),
      ],
      { ...none, vramBudgetMib: 6000 },
    );
    expect(cell(gates, 'VRAM budget', 'f16').detail).toBe('8000 MiB exceeds 6000 MiB by 2000 MiB');
    expect(cell(gates, 'VRAM budget', 'q4').status).toBe('pass');
    expect(cell(gates, 'VRAM budget', 'q2').status).toBe('unknown');
  });

  it('an absolute acceptance floor applies when asked for', () => {
    const gates = evaluateGates([base(), condition('q8', { acceptance: { accepted: 24, judged: 32 } })], { ...none, minAcceptance: 0.8 });
    expect(cell(gates, 'acceptance floor', 'q8').detail).toBe('75.0 % is 5.0 points below 80.0 %');
  });
});

describe('recommendation ranking', () => {
  it('picks the smallest eligible file that no TTFT/TPOT verdict calls slower, and names each rejected gate with its margin', () => {
    const q8 = condition('q8_0', {
      file_bytes: 530 * MIB,
      token_agreement: { mean: 0.97, exact_match_rate: 0.75, first_divergence_index_mean: 20, items: 8 },
      kld_mean: 0.004,
    });
    const q4 = condition('q4_k_m', {
      file_bytes: 300 * MIB,
      token_agreement: { mean: 0.62, exact_match_rate: 0.25, first_divergence_index_mean: 6, items: 8 },
      kld_mean: 0.2,
      acceptance: { accepted: 0, judged: 32 },
    });
    const result = recommend(
      [base(), q8, q4],
      [verdict('q8_0', 'tpot_ms p50', 'equivalent'), verdict('q4_k_m', 'tpot_ms p50', 'faster', -3)],
      none,
    );
    expect(result.choice).toBe('q8_0');
    expect(result.reason).toMatch(
      /^Passes every gate and is better than f16 \(file size 530\.0 MiB vs 1000\.0 MiB\); tpot_ms p50 equivalent/,
    );
    const rejected = result.excluded.find((item) => item.name === 'q4_k_m')!.reason;
    expect(rejected).toMatch(/acceptance failed: 0\/32/);
    expect(rejected).toMatch(/token agreement failed: 62\.0 % is 28\.0 points below 90\.0 %/);
    expect(rejected).toMatch(/kld failed: 0\.200000 exceeds 0\.1 by 0\.100000/);
    expect(result.gates!.length).toBe(3);
    expect(result.objective).toBe('smallest file size, then TPOT p50');
  });

  it('a smaller candidate called slower by a TPOT verdict is not better: keep the baseline, saying why', () => {
    const q8 = condition('q8_0', { file_bytes: 530 * MIB });
    const result = recommend([base(), q8], [verdict('q8_0', 'tpot_ms p50', 'slower', 2)], none);
    expect(result.choice).toBe('f16');
    expect(result.reason).toMatch(/^Keep the baseline f16: .*slower than f16: tpot_ms p50 slower \(\+2\.00 ms/);
    expect(result.excluded[0]).toMatchObject({ name: 'q8_0' });
  });

  it('keeps the baseline when nothing is better beyond noise (a byte-identical copy: same size, no faster verdict)', () => {
    const copy = condition('copy');
    const result = recommend(
      [base(), copy],
      [verdict('copy', 'ttft_ms p50', 'no significant difference'), verdict('copy', 'tpot_ms p50', 'equivalent')],
      none,
    );
    expect(result.choice).toBe('f16');
    expect(result.reason).toMatch(
      /Keep the baseline f16: no eligible candidate is better beyond noise — copy is not better beyond noise \(file size 1000\.0 MiB vs 1000\.0 MiB; ttft_ms p50 no significant difference, tpot_ms p50 equivalent\)/,
    );
  });

  it('a file under 1 % smaller is not better on size alone', () => {
    expect(recommend([base(), condition('other', { file_bytes: 995 * MIB })], [], none).choice).toBe('f16');
    expect(recommend([base(), condition('other', { file_bytes: 985 * MIB })], [], none).choice).toBe('other');
  });

  it('a same-size candidate that a verdict calls faster is better', () => {
    const fast = condition('tuned', { tpot: 8 });
    expect(recommend([base(), fast], [verdict('tuned', 'tpot_ms p50', 'faster', -2)], none).choice).toBe('tuned');
  });

  it('keeps the baseline when every candidate fails a gate', () => {
    const result = recommend([base(), condition('q4', { kld_mean: 0.5, file_bytes: 100 * MIB })], [], none);
    expect(result.choice).toBe('f16');
    expect(result.reason).toMatch(/Keep the baseline f16: no eligible candidate is better beyond noise — q4 fails a gate\./);
  });

  it('ranks by server VRAM when every condition has it, a saving under 1 % is not smaller', () => {
    const vram = (server: number) => ({ baseline_mib: 0, peak_mib: server, server_mib: server });
    const same = recommend([condition('f16', { vram: vram(1000) }), condition('q8', { vram: vram(995), file_bytes: 500 * MIB })], [], none);
    expect(same.choice).toBe('f16');
    const smaller = recommend(
      [condition('f16', { vram: vram(1000) }), condition('q8', { vram: vram(700) }), condition('q4', { vram: vram(500) })],
      [],
      none,
    );
    expect(smaller.choice).toBe('q4');
    expect(smaller.objective).toBe('smallest server VRAM, then TPOT p50');
  });

  it('a KV cache experiment ranks by the KV cache the server allocated when every condition has it (one file, several cache types), before VRAM', () => {
    const vram = (server: number) => ({ baseline_mib: 0, peak_mib: server, server_mib: server });
    const conditions = [
      condition('f16', { kv_cache_mib: 16, vram: vram(1000) }),
      condition('q8_0', { kv_cache_mib: 8.5, vram: vram(1000) }),
      condition('q4_0', {
        kv_cache_mib: 4.5,
        vram: vram(1000),
        token_agreement: { mean: 0.5, exact_match_rate: 0, first_divergence_index_mean: 3, items: 8 },
      }),
    ];
    const kv = recommend(conditions, [], none, KV_CACHE_GATES);
    expect(kv.objective).toBe('smallest KV cache, then TPOT p50');
    // q4_0 is smallest but loses the token-agreement gate; q8_0 is the smallest that passes every gate.
    expect(kv.choice).toBe('q8_0');
    expect(kv.reason).toMatch(/KV cache 8\.5 MiB vs 16\.0 MiB/);
    // One condition without the log figure: memory falls back to what every condition has.
    const partial = recommend(
      [condition('f16', { kv_cache_mib: 16, vram: vram(1000) }), condition('q8_0', { vram: vram(700) })],
      [],
      none,
      KV_CACHE_GATES,
    );
    expect(partial.objective).toBe('smallest server VRAM, then TPOT p50');
    // The KV cache is the kvcache kind's own memory: the shared recommendation alone compares VRAM.
    expect(recommend(conditions, [], none).objective).toBe('smallest server VRAM, then TPOT p50');
  });

  it('objective tpot: the lowest TPOT p50 backed by a faster verdict', () => {
    const result = recommend(
      [base(), condition('a', { tpot: 9 }), condition('b', { tpot: 7 })],
      [verdict('a', 'tpot_ms p50', 'faster', -1), verdict('b', 'tpot_ms p50', 'faster', -3)],
      { ...none, objective: 'tpot' },
    );
    expect(result.choice).toBe('b');
  });

  it('no choice when the baseline itself fails an SLO and nothing else passes', () => {
    const result = recommend([condition('f16', { ttft: 300 }), condition('q8', { ttft: 300 })], [], { ...none, slo: { ttft_ms: 200 } });
    expect(result.choice).toBeNull();
    expect(result.reason).toMatch(
      /No condition meets the gates, the baseline f16 included \(SLO ttft_ms p95 failed: 450\.0 ms misses 200 ms/,
    );
  });

  it('a candidate that meets the SLO the baseline misses is chosen, saying so', () => {
    const result = recommend([condition('f16', { ttft: 300 }), condition('q8', { ttft: 100, file_bytes: 1000 * MIB })], [], {
      ...none,
      slo: { ttft_ms: 200 },
    });
    expect(result.choice).toBe('q8');
    expect(result.reason).toMatch(/^The baseline f16 fails a gate .* and q8 passes every gate/);
  });
});

describe('gate flags', () => {
  it('reads thresholds, "off" and the objective; refuses bad values naming the flag', () => {
    const constraints = constraintsFromFlags(
      { 'min-agreement': '0.95', 'max-kld': 'off', 'acceptance-alpha': '0.01', 'vram-budget': '6000', objective: 'tpot' },
      null,
    );
    expect(constraints).toMatchObject({
      minAgreement: 0.95,
      maxKld: null,
      acceptanceAlpha: 0.01,
      vramBudgetMib: 6000,
      objective: 'tpot',
      disabledGates: ['kld'],
    });
    expect(() => constraintsFromFlags({ 'min-agreement': '1.5' }, null)).toThrow(
      /--min-agreement must be a fraction from 0 to 1 or off, got "1.5"/,
    );
    expect(() => constraintsFromFlags({ 'min-acceptance': 'off' }, null)).toThrow(/--min-acceptance must be a fraction/);
    expect(() => constraintsFromFlags({ objective: 'cheapest' }, null)).toThrow(/--objective must be memory, tpot or ttft/);
  });
});

describe('contamination', () => {
  it('a contaminated candidate, or any candidate beside a contaminated baseline, is not recommended; the baseline is kept', () => {
    const dirty = condition('q8', { file_bytes: 500 * MIB, contaminated: true, contamination_reason: 'other processes competed' });
    const result = recommend([base(), dirty], [], none);
    expect(result.choice).toBe('f16');
    expect(result.excluded[0]!.reason).toMatch(/uncontaminated failed: other processes competed/);
    const dirtyBase = recommend(
      [condition('f16', { contaminated: true, contamination_reason: 'busy' }), condition('q8', { file_bytes: 500 * MIB })],
      [],
      none,
    );
    expect(dirtyBase.choice).toBe('f16');
    expect(dirtyBase.excluded[0]!.reason).toMatch(/the baseline f16 is contaminated/);
  });
});
