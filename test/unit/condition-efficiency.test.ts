import { describe, expect, it } from 'vitest';
import { conditionEfficiency } from '../../src/main/experiments/condition-summary';
import { efficiencyCells, efficiencyNotes } from '../../src/shared/energy-bandwidth-lines';
import type { RunSummary } from '../../src/shared/contract/runs';

/** A window's summary with only what the efficiency reads. */
const window = (
  joulesPerToken: number | null,
  gbPerS: number | null,
  utilization: number | null,
  reasons: { energy?: string; bandwidth?: string } = {},
) =>
  ({
    telemetry: { energy: { joules_per_output_token: joulesPerToken, reason: reasons.energy ?? null } },
    decode_bandwidth: {
      effective_gb_per_s: gbPerS,
      utilization,
      peak: utilization === null ? null : { gb_per_s: 50, kind: 'cpu probe', label: 'reachable with 2 threads', source: 'probe' },
      reason: reasons.bandwidth ?? null,
    },
  }) as unknown as RunSummary;

describe("a condition's energy and decode bandwidth", () => {
  it('averages the windows that have them, with a t interval over windows', () => {
    const efficiency = conditionEfficiency([window(0.2, 30, 0.6), window(0.4, 34, 0.68), null]);
    expect(efficiency.joules_per_output_token).toBeCloseTo(0.3, 12);
    // Two windows: mean 0.3, sd √0.02, t(0.975, 1) = 12.706.
    const half = 12.706204736174698 * (Math.sqrt(0.02) / Math.sqrt(2));
    expect(efficiency.joules_per_output_token_ci![0]).toBeCloseTo(0.3 - half, 6);
    expect(efficiency.joules_per_output_token_ci![1]).toBeCloseTo(0.3 + half, 6);
    expect(efficiency).toMatchObject({ energy_windows: 2, decode_gb_per_s: 32, bandwidth_windows: 2, energy_reason: null });
    expect(efficiency.bandwidth_utilization).toBeCloseTo(0.64, 12);
    expect(efficiency.bandwidth_peak).toBe('reachable with 2 threads (cpu probe)');
    expect(efficiencyCells(efficiency)).toEqual({ energy: '0.300 J [0.00, 1.57]', bandwidth: '32.0 GB/s (64 %)' });
    expect(efficiencyNotes([{ name: 'a', efficiency }])).toEqual(['decode bandwidth (%): share of reachable with 2 threads (cpu probe)']);
  });

  it('says once under the table which conditions read partly from the CPU cache, where a share can pass 100 %', () => {
    const note = "the bytes read per step are under 4× this CPU's 32 MiB last-level cache: part of each step is read from cache";
    const nearCache = (summary: RunSummary) => ({ ...summary, decode_bandwidth: { ...summary.decode_bandwidth!, cache_note: note } });
    const small = conditionEfficiency([window(0.2, 53, 1.28), nearCache(window(0.2, 53, 1.28))]);
    expect(small.bandwidth_cache_note).toBe(note);
    const large = conditionEfficiency([window(0.2, 30, 0.6)]);
    expect(large.bandwidth_cache_note).toBeNull();
    expect(
      efficiencyNotes([
        { name: 'f16', efficiency: large },
        { name: 'q8_0', efficiency: small },
        { name: 'q4_k_m', efficiency: small },
      ]),
    ).toEqual(['decode bandwidth (%): share of reachable with 2 threads (cpu probe)', `decode bandwidth (%) of q8_0, q4_k_m: ${note}`]);
  });

  it('says why when no window measured them, and is a dash for experiments stored before it existed', () => {
    const none = conditionEfficiency([
      window(null, null, null, { energy: 'no RAPL counters readable', bandwidth: 'no successful request' }),
    ]);
    expect(none).toMatchObject({
      joules_per_output_token: null,
      energy_reason: 'no RAPL counters readable',
      bandwidth_reason: 'no successful request',
    });
    expect(efficiencyCells(none)).toEqual({ energy: '—', bandwidth: '—' });
    expect(efficiencyCells(undefined)).toEqual({ energy: '—', bandwidth: '—' });
    // Said once under the table, for every condition it applies to.
    const measured = conditionEfficiency([window(0.2, 30, 0.6)]);
    expect(
      efficiencyNotes([
        { name: 'f16', efficiency: none },
        { name: 'q8_0', efficiency: none },
      ]),
    ).toEqual([
      'energy per output token: — for every condition (no RAPL counters readable)',
      'decode bandwidth: — for every condition (no successful request)',
    ]);
    expect(
      efficiencyNotes([
        { name: 'spec off', efficiency: measured },
        { name: 'draft-max 4', efficiency: none },
        { name: 'stored before', efficiency: undefined },
      ]),
    ).toEqual([
      'decode bandwidth (%): share of reachable with 2 threads (cpu probe)',
      'energy per output token: — for draft-max 4 (no RAPL counters readable)',
      'decode bandwidth: — for draft-max 4 (no successful request)',
    ]);
  });
});
