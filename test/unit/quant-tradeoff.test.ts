import { describe, expect, it } from 'vitest';
import type { ExperimentResult } from '../../src/shared/contract/experiments';
import { quantTradeoffOption } from '../../src/renderer/src/experiment-kinds/quant-tradeoff';

const MIB = 2 ** 20;
const condition = (name: string, tpot: number, kld: number | null, fileMib: number) =>
  ({
    name,
    metrics: { tpot_ms: { p50: tpot } },
    kld_mean: kld,
    file_bytes: fileMib * MIB,
    vram: null,
    token_agreement: null,
  }) as unknown as ExperimentResult['conditions'][number];

const result = (conditions: ExperimentResult['conditions'], choice: string | null): ExperimentResult =>
  ({
    kind: 'quant',
    conditions,
    recommendation: {
      choice,
      reason: '',
      excluded: [],
      gates: [{ name: 'kld', threshold: 'mean KL divergence ≤ 0.1 nats per token', conditions: [] }],
    },
  }) as unknown as ExperimentResult;

type Point = { name: string; value: [number, number, number]; symbolSize: number; label: { formatter: string } };
const seriesOf = (option: ReturnType<typeof quantTradeoffOption>) =>
  (option as { series: { data: Point[]; markLine?: { data: { yAxis: number }[] } }[] }).series[0]!;

describe('the quantization trade-off chart', () => {
  it('places each condition by speed and KLD, sizes it by memory, draws the KLD gate and marks the recommendation', () => {
    const series = seriesOf(
      quantTradeoffOption(
        result([condition('f16', 3.1, 0, 87), condition('q8_0', 2.3, 1e-6, 47), condition('q4_k_m', 1.8, 5e-5, 30)], 'q4_k_m'),
      ),
    );
    expect(series.data.map((point) => [point.name, point.value[0], point.value[1]])).toEqual([
      ['f16', 3.1, 0],
      ['q8_0', 2.3, 1e-6],
      ['q4_k_m', 1.8, 5e-5],
    ]);
    const sizes = series.data.map((point) => point.symbolSize);
    expect(sizes[0]).toBeGreaterThan(sizes[1]!);
    expect(sizes[1]).toBeGreaterThan(sizes[2]!);
    expect(series.data[2]!.label.formatter).toBe('q4_k_m (recommended)');
    expect(series.data[0]!.label.formatter).toBe('f16');
    expect(series.markLine?.data).toEqual([{ yAxis: 0.1 }]);
  });

  it('falls back to token agreement without KLD, and draws nothing without points', () => {
    const withAgreement = {
      ...condition('q8_0', 2, null, 10),
      token_agreement: { mean: 0.75 },
    } as unknown as ExperimentResult['conditions'][number];
    const series = seriesOf(quantTradeoffOption(result([withAgreement], null)));
    expect(series.data[0]!.value[1]).toBeCloseTo(0.25);
    expect(series.markLine).toBeUndefined();
    expect(quantTradeoffOption(result([condition('q8_0', 2, null, 10)], null))).toBeNull();
  });
});
