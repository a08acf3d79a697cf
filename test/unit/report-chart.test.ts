import { describe, expect, it } from 'vitest';
import type { Distribution } from '../../src/shared/contract/runs';
import type { ConditionResult, ExperimentResult } from '../../src/shared/contract/experiments';
import { experimentTable } from '../../src/main/cli/experiment-table';
import { reportHtml } from '../support/experiment-report';
import { quantTradeoffSvg } from '../../src/main/experiments/kinds/quant/report-section';
import { offloadWarnings } from '../../src/shared/gpu-offload';
import { sharedProtocolFields } from '../support/experiment-result';

const MIB = 2 ** 20;
const distribution = (p50: number | null): Distribution => ({
  n: p50 === null ? 0 : 40,
  mean: p50,
  std: p50 === null ? null : 0.1,
  p50,
  p90: p50,
  p95: p50,
  p99: null,
  min: p50,
  max: p50,
  unsupported: [],
});

const condition = (name: string, tpot: number | null, extra: Partial<ConditionResult>): ConditionResult => ({
  name,
  run_ids: [`${name}-run-0000`],
  metrics: {
    ttft_ms: distribution(20),
    tpot_ms: distribution(tpot),
    itl_ms: distribution(tpot),
    e2e_ms: distribution(200),
    queue_ms: distribution(null),
    client_overhead_ms: distribution(0.2),
  },
  throughput: { requests_per_s: 2, output_tokens_per_s: tpot ? 1000 / tpot : null },
  accepted_rate: null,
  requests: { attempted: 40, completed: 40, failed: 0 },
  evidence: { cached_prompt_tokens: 0, prompt_tokens: 400, timings_cache_n_max: null, metrics_cached_prompt_tokens: null },
  contaminated: false,
  contamination_reason: null,
  ...extra,
});

const experiment = (kind: ExperimentResult['kind'], conditions: ConditionResult[], choice: string | null): ExperimentResult =>
  // A result of the kind given: its protocol is of that kind too, which TypeScript cannot follow through the variable.
  ({
    experiment_id: '0123456789abcdef',
    kind,
    status: 'completed',
    protocol: sharedProtocolFields(kind),
    conditions,
    verdicts: [],
    recommendation: {
      choice,
      reason: 'fastest within the gates',
      excluded: [],
      gates:
        kind === 'quant'
          ? [
              {
                name: 'kld',
                threshold: 'mean KL divergence ≤ 0.05 nats per token',
                conditions: [{ name: 'q4_k_m', value: 0.02, status: 'pass', detail: 'ok' }],
              },
            ]
          : undefined,
    },
  }) as ExperimentResult;

const quant = () =>
  experiment(
    'quant',
    [
      condition('f16', 3.1, { kld_mean: 0, file_bytes: 87 * MIB, vram: { baseline_mib: 0, peak_mib: 900, server_mib: 880 } }),
      condition('q8_0', 2.3, { kld_mean: 0.004, file_bytes: 47 * MIB, vram: { baseline_mib: 0, peak_mib: 500, server_mib: 480 } }),
      condition('q4_k_m', 1.8, { kld_mean: 0.02, file_bytes: 30 * MIB, vram: { baseline_mib: 0, peak_mib: 330, server_mib: 310 } }),
      // A hostile name must come out as text, not markup.
      condition('<b>q3</b>', 1.6, { kld_mean: 0.09, file_bytes: 25 * MIB, vram: { baseline_mib: 0, peak_mib: 290, server_mib: 270 } }),
    ],
    'q4_k_m',
  );

const chartOf = (html: string) => /<svg[^>]*aria-label="Speed against quality[^"]*"[\s\S]*?<\/svg>/.exec(html)?.[0];

describe('the quantization trade-off chart in the HTML report', () => {
  it('draws one bubble per condition, rings and labels the recommendation and dashes the KLD gate', async () => {
    const html = await reportHtml(quant());
    const svg = chartOf(html);
    expect(svg).toBeDefined();
    // In the quantization section, after its table.
    expect(html.indexOf(svg!)).toBeGreaterThan(html.indexOf('<h2>Quantization</h2>'));
    expect(html.indexOf(svg!)).toBeLessThan(html.indexOf('<h2>Verdicts</h2>'));
    expect(svg!.match(/<circle /g)).toHaveLength(4);
    expect(svg).toContain('Speed against quality (bubble: server VRAM)');
    expect(svg).toContain('KLD vs baseline (nats)');
    expect(svg).toContain('TPOT p50 (ms), lower is faster');
    expect(svg).toMatch(/<circle [^>]*stroke="#1a7f37" stroke-width="3"[^>]*><title>q4_k_m:/);
    expect(svg!.match(/stroke="#1a7f37"/g)).toHaveLength(1);
    expect(svg).toContain('>q4_k_m (recommended)</text>');
    expect(svg).toMatch(/<line class="gate"[^>]*stroke-dasharray/);
    expect(svg).toContain('gate: KLD ≤ 0.05');
    expect(svg).toContain('&lt;b&gt;q3&lt;/b&gt;');
    expect(svg).not.toContain('<b>q3</b>');
    // Min and max ticks on both axes: y starts at 0 (the baseline's KLD), x spans the TPOTs.
    expect(svg).toMatch(/text-anchor="end">0<\/text>/);
    expect(svg).toMatch(/>1\.45<\/text>/);
    expect(svg).toMatch(/>3\.25<\/text>/);
  });

  it('places the gate between the bubbles it separates and sizes bubbles by memory', () => {
    const svg = quantTradeoffSvg(quant());
    const circles = [...svg.matchAll(/<circle cx="([\d.]+)" cy="([\d.]+)" r="([\d.]+)"[^>]*><title>([^:]+):/g)].map((match) => ({
      name: match[4]!,
      cy: Number(match[2]),
      r: Number(match[3]),
    }));
    const gateY = Number(/<line class="gate" x1="\d+" y1="([\d.]+)"/.exec(svg)![1]);
    const byName = Object.fromEntries(circles.map((circle) => [circle.name, circle]));
    // SVG y grows downwards: below the gate line is within it.
    expect(byName['q4_k_m']!.cy).toBeGreaterThan(gateY);
    expect(byName['&lt;b&gt;q3&lt;/b&gt;']!.cy).toBeLessThan(gateY);
    expect(byName['f16']!.r).toBeGreaterThan(byName['q8_0']!.r);
    expect(byName['q8_0']!.r).toBeGreaterThan(byName['q4_k_m']!.r);
  });

  it('falls back to token agreement and file size, without a gate line', () => {
    const result = quant();
    result.conditions = result.conditions.map((entry, index) => ({
      ...entry,
      kld_mean: null,
      vram: { baseline_mib: null, peak_mib: null, server_mib: null },
      token_agreement: { mean: 1 - index * 0.1, exact_match_rate: null, first_divergence_index_mean: null, items: 8 },
    }));
    const svg = quantTradeoffSvg(result);
    expect(svg).toContain('Speed against quality (bubble: file size)');
    expect(svg).toContain('1 − token agreement');
    expect(svg.match(/<circle /g)).toHaveLength(4);
    expect(svg).not.toContain('class="gate"');
  });

  it('draws nothing without points, and nothing for other kinds of experiment', async () => {
    const noQuality = experiment('quant', [condition('f16', 3, { file_bytes: MIB }), condition('q8_0', 2, { file_bytes: MIB })], null);
    expect(quantTradeoffSvg(noQuality)).toBe('');
    expect(chartOf(await reportHtml(noQuality))).toBeUndefined();
    const noSpeed = experiment('quant', [condition('f16', null, { kld_mean: 0 })], null);
    expect(chartOf(await reportHtml(noSpeed))).toBeUndefined();
    const warmcold = experiment('warmcold', [condition('cold', 2, {}), condition('warm', 1.5, {})], 'warm');
    const html = await reportHtml(warmcold);
    expect(html).toContain('<h1>Warm against cold</h1>');
    expect(chartOf(html)).toBeUndefined();
    expect(html).not.toContain('<circle');
  });
});

describe('where the weights sat, in every face of an experiment', () => {
  it('warns once per warning, naming the conditions, in the report and the CLI table; escapes what it prints', async () => {
    const warning = 'MOST WEIGHTS ARE IN HOST MEMORY: 22994 of 44280 MiB (52 %) <on the CPU>';
    const result = experiment(
      'quant',
      [
        condition('f16', 3, { file_bytes: MIB, offload_warning: warning }),
        condition('q8_0', 2, { file_bytes: MIB, offload_warning: warning }),
        condition('q4_k_m', 1.5, { file_bytes: MIB, offload_warning: null }),
      ],
      null,
    );
    expect(offloadWarnings(result.conditions)).toEqual([`f16, q8_0: ${warning}`]);
    const html = await reportHtml(result);
    expect(html).toContain(
      '<p class="bad" data-offload-warnings>f16, q8_0: MOST WEIGHTS ARE IN HOST MEMORY: 22994 of 44280 MiB (52 %) &lt;on the CPU&gt;</p>',
    );
    expect(experimentTable(result)).toContain(`\nf16, q8_0: ${warning}`);
    // None warned (or a result stored before the field existed): nothing is printed.
    const quiet = experiment('quant', [condition('f16', 3, { file_bytes: MIB })], null);
    expect(await reportHtml(quiet)).not.toContain('data-offload-warnings');
    expect(experimentTable(quiet)).not.toContain('HOST MEMORY');
  });
});
