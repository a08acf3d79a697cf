import { describe, expect, it } from 'vitest';
import { conditionVerdicts, meanOverWindows } from '../../src/main/experiments/condition-summary';
import { studentTCdf, studentTQuantile } from '../../src/main/metrics/student-t';
import { decideVerdicts, type VerdictQuestion } from '../../src/main/metrics/window-verdicts';
import { seededRandom } from '../../src/main/core/random';
import type { RequestRow } from '../../src/main/store/run-rows';
import { simulateExperiment } from './verdict-simulation.helpers';

const window = (seed: number, n: number, mean: number, spread = 10) => {
  const random = seededRandom(seed);
  return Array.from({ length: n }, () => mean + (random() - 0.5) * spread);
};
const windows = (seed: number, count: number, n: number, means: number | number[]) =>
  Array.from({ length: count }, (_, i) => window(seed * 100 + i, n, Array.isArray(means) ? means[i]! : means));
const question = (aWindows: number[][], bWindows: number[][], extra: Partial<VerdictQuestion> = {}): VerdictQuestion => ({
  metric: 'ttft_ms p50',
  a: 'A',
  b: 'B',
  aWindows,
  bWindows,
  statistic: 'p50',
  ...extra,
});

describe("Student's t", () => {
  it('matches tabulated quantiles', () => {
    expect(studentTQuantile(0.975, 4)).toBeCloseTo(2.776445, 5);
    expect(studentTQuantile(0.975, 10)).toBeCloseTo(2.228139, 5);
    expect(studentTQuantile(0.995, 3)).toBeCloseTo(5.840909, 5);
    expect(studentTQuantile(0.025, 30)).toBeCloseTo(-2.042272, 5);
    expect(studentTCdf(0, 7)).toBeCloseTo(0.5, 12);
    expect(studentTCdf(1.812461, 10)).toBeCloseTo(0.95, 6);
  });
});

describe('window verdicts', () => {
  it('abstains below the minimum windows and requests, saying what to add', () => {
    const [fewWindows] = decideVerdicts([question(windows(1, 2, 32, 100), windows(2, 6, 32, 100))]);
    expect(fewWindows!.verdict).toBe('insufficient data');
    expect(fewWindows!.note).toMatch(/A has 2 window\(s\); a verdict needs 3 per side \(raise --repeats\)/);
    const [fewRequests] = decideVerdicts([question(windows(1, 3, 2, 100), windows(2, 3, 2, 60))]);
    expect(fewRequests!.verdict).toBe('insufficient data');
    expect(fewRequests!.note).toMatch(/raise --requests/);
    const [thinP95] = decideVerdicts([question(windows(1, 6, 8, 100), windows(2, 6, 8, 60), { statistic: 'p95', metric: 'ttft_ms p95' })]);
    expect(thinP95!.verdict).toBe('insufficient data');
    expect(thinP95!.note).toMatch(/n too small: p95 needs 20 requests in every window/);
  });

  it('calls a large shift faster or slower, respecting which direction is better', () => {
    const a = windows(1, 6, 32, 100);
    expect(decideVerdicts([question(a, windows(2, 6, 32, 70))])[0]!.verdict).toBe('faster');
    expect(decideVerdicts([question(a, windows(3, 6, 32, 130))])[0]!.verdict).toBe('slower');
    // Which way is better comes from the metric table: more output tokens per second is faster.
    expect(
      decideVerdicts([question(a, windows(4, 6, 32, 130), { metric: 'output_tokens_per_s mean', statistic: 'mean' })])[0]!.verdict,
    ).toBe('faster');
  });

  it('refuses a metric the metric table does not hold rather than guess which way is better', () => {
    expect(() => decideVerdicts([question(windows(1, 6, 32, 100), windows(2, 6, 32, 70), { metric: 'kv_hits p50' })])).toThrow(
      /"kv_hits p50", which the metric table does not hold/,
    );
  });

  it('does not count window drift as a difference: drifting windows of one condition are not called different', () => {
    // Pooled over requests this is a clear difference; over windows it is not.
    const a = windows(1, 3, 200, [90, 100, 110]);
    const b = windows(2, 3, 200, [112, 92, 101]);
    const [row] = decideVerdicts([question(a, b)]);
    expect(row!.verdict).not.toBe('faster');
    expect(row!.verdict).not.toBe('slower');
    expect(row!.ci![0]).toBeLessThan(0);
  });

  it('tells equivalent within the margin apart from merely not significant', () => {
    const tight = decideVerdicts([question(windows(1, 6, 64, 100), windows(2, 6, 64, 100.5))])[0]!;
    expect(tight.verdict).toBe('equivalent');
    expect(tight.equivalence_margin).toBe(0.05);
    const noisy = decideVerdicts([question(windows(1, 3, 32, [80, 120, 100]), windows(2, 3, 32, [95, 130, 70]))])[0]!;
    expect(noisy.verdict).toBe('no significant difference');
    expect(noisy.note).toMatch(/nor to be within ±5 %/);
  });

  it("applies Holm's correction: a borderline difference is called alone, and not among seven nulls", () => {
    const nulls = Array.from({ length: 7 }, (_, i) => {
      const same = windows(500 + i, 6, 32, 100);
      return question(
        same,
        same.map((w) => [...w]),
        { b: `null ${i}` },
      );
    });
    let demonstrated = false;
    for (let seed = 1; seed < 300 && !demonstrated; seed++) {
      const random = seededRandom(seed);
      const drift = () => 1 + (random() - 0.5) * 0.2;
      const borderline = question(
        windows(
          seed,
          6,
          32,
          Array.from({ length: 6 }, () => 100 * drift()),
        ),
        windows(
          seed + 1000,
          6,
          32,
          Array.from({ length: 6 }, () => 108 * drift()),
        ),
      );
      const alone = decideVerdicts([borderline])[0]!;
      const inFamily = decideVerdicts([borderline, ...nulls])[0]!;
      if (alone.verdict === 'slower' && inFamily.verdict !== 'slower') {
        expect(alone.confidence).toBeCloseTo(0.95, 10);
        expect(inFamily.confidence).toBeCloseTo(1 - 0.05 / 8, 10);
        demonstrated = true;
      }
    }
    expect(demonstrated).toBe(true);
  });

  it('reports each interval at the level its decision used, so it excludes zero exactly when the verdict is directional', () => {
    for (let seed = 1; seed <= 200; seed++) {
      for (const row of simulateExperiment(
        { windows: 6, requestsPerWindow: 32, driftSd: 0.03, requestCv: 0.2, candidates: 2, shift: 1.08 },
        seed,
      )) {
        if (row.verdict === 'insufficient data') continue;
        const excludesZero = row.relative_ci![0] > 0 || row.relative_ci![1] < 0;
        expect(excludesZero).toBe(row.verdict === 'faster' || row.verdict === 'slower');
        expect(row.confidence).toBeGreaterThanOrEqual(0.95);
        if (row.verdict !== 'faster' && row.verdict !== 'slower') expect(row.confidence).toBeGreaterThanOrEqual(1 - 0.05 / 8 - 1e-12);
      }
    }
  });
});

describe('condition verdicts', () => {
  const rows = (values: number[]): RequestRow[] =>
    values.map((value) => ({ warmup: 0, error_class: null, ttft_ms: value, tpot_ms: value / 10 }) as RequestRow);
  it('withholds verdicts that involve a contaminated condition', () => {
    const base = windows(1, 6, 32, 100).map(rows);
    const other = windows(2, 6, 32, 50).map(rows);
    const verdicts = conditionVerdicts([
      { name: 'base', windows: base },
      { name: 'other', windows: other, contaminated: 'another llama-server was busy' },
    ]);
    expect(verdicts).toHaveLength(4);
    for (const row of verdicts) {
      expect(row.verdict).toBe('insufficient data');
      expect(row.note).toMatch(/other is contaminated \(see its condition row\)/);
      expect(row.note).not.toMatch(/another llama-server was busy/);
      expect(row.a_value).not.toBeNull();
    }
    expect(
      conditionVerdicts([
        { name: 'base', windows: base },
        { name: 'other', windows: other },
      ])[0]!.verdict,
    ).toBe('faster');
  });

  it('averages throughput over windows with a t interval', () => {
    const result = meanOverWindows([10, 12, 14, null]);
    expect(result.mean).toBe(12);
    expect(result.windows).toBe(3);
    // sd 2, n 3: half-width t(0.975, 2) · 2 / √3 = 4.303 · 1.1547
    expect(result.ci![1] - 12).toBeCloseTo(4.302653 * (2 / Math.sqrt(3)), 4);
    expect(meanOverWindows([5]).ci).toBeNull();
  });
});

describe('condition verdicts on further pairs', () => {
  const rows = (values: number[]): RequestRow[] =>
    values.map((value) => ({ warmup: 0, error_class: null, ttft_ms: value, tpot_ms: value / 10 }) as RequestRow);

  it('judges a pair asked for in the same family as the baseline comparisons, so the family error stays its own', () => {
    const base = { name: 'base', windows: windows(7, 6, 32, 100).map(rows) };
    const own = { name: 'own', windows: windows(8, 6, 32, 100).map(rows) };
    const swapped = { name: 'swapped', windows: windows(9, 6, 32, 80).map(rows) };
    const plain = conditionVerdicts([base, own, swapped]);
    const paired = conditionVerdicts([base, own, swapped], undefined, { pairs: [['own', 'swapped']] });
    expect(plain).toHaveLength(8);
    expect(paired.slice(8).map((row) => [row.metric, row.a, row.b, row.verdict])).toEqual([
      ['ttft_ms p50', 'own', 'swapped', 'faster'],
      ['ttft_ms p95', 'own', 'swapped', 'faster'],
      ['tpot_ms p50', 'own', 'swapped', 'faster'],
      ['tpot_ms p95', 'own', 'swapped', 'faster'],
    ]);
    // Twelve questions instead of eight: Holm's first step spends 0.05 / 12, not 0.05 / 8, so the
    // smallest level any row was decided at is stricter than without the pair.
    const strictest = (verdicts: typeof plain) => Math.max(...verdicts.map((row) => row.confidence ?? 0));
    expect(strictest(plain)).toBeCloseTo(1 - 0.05 / 8, 6);
    expect(strictest(paired)).toBeCloseTo(1 - 0.05 / 12, 6);
  });
});

describe('condition verdicts on embeddings', () => {
  const rows = (values: number[]): RequestRow[] =>
    values.map((value) => ({ warmup: 0, error_class: null, ttft_ms: null, tpot_ms: null, e2e_ms: value }) as RequestRow);

  it('judges latency per request and each window inputs/s where every side ran embeddings, more inputs/s being better', () => {
    // Batching: each request takes longer, yet more texts go through per second.
    const small = {
      name: 'batch 1',
      windows: windows(3, 6, 32, 30).map(rows),
      embeddings: { window_inputs_per_s: [29, 30, 31, 29.5, 30.5, 30] },
    };
    const large = {
      name: 'batch 8',
      windows: windows(4, 6, 32, 240).map(rows),
      embeddings: { window_inputs_per_s: [60, 62, 61, 59, 63, 61] },
    };
    const verdicts = conditionVerdicts([small, large]);
    expect(verdicts.map((row) => row.metric)).toEqual(['e2e_ms p50', 'e2e_ms p95', 'embedding_inputs_per_s mean']);
    expect(verdicts.map((row) => row.verdict)).toEqual(['slower', 'slower', 'faster']);
    expect(verdicts[2]).toMatchObject({ a_value: expect.closeTo(30, 1), b_value: expect.closeTo(61, 1), windows: [6, 6] });
    // Equal rates give no direction: the wrong sign for a rate would call the larger batch slower here.
    const level = conditionVerdicts([small, { ...large, embeddings: small.embeddings }]);
    expect(level[2]!.verdict).not.toMatch(/faster|slower/);
  });

  it('keeps the verdicts of generated answers where a side did not run embeddings', () => {
    const answers = (seed: number) =>
      windows(seed, 6, 32, 50).map((values) =>
        values.map((value) => ({ warmup: 0, error_class: null, ttft_ms: value, tpot_ms: value / 10 }) as RequestRow),
      );
    const verdicts = conditionVerdicts([
      { name: 'a', windows: answers(5), embeddings: { window_inputs_per_s: [1, 2, 3, 4, 5, 6] } },
      { name: 'b', windows: answers(6) },
    ]);
    expect(verdicts.map((row) => row.metric)).toEqual(['ttft_ms p50', 'ttft_ms p95', 'tpot_ms p50', 'tpot_ms p95']);
  });
});
