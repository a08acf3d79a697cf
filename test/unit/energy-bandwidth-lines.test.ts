import { describe, expect, it } from 'vitest';
import { bandwidthLine, energyLine, throttleLine } from '../../src/shared/energy-bandwidth-lines';
import { bandwidthUnavailable, decodeBandwidth } from '../../src/main/metrics/decode-bandwidth';
import { energyUnavailable } from '../../src/main/telemetry/window-energy';

describe('the energy, throttling and bandwidth lines of a run summary', () => {
  it('reads energy with its source, coverage and per-work figures, or the reason it is missing', () => {
    expect(
      energyLine({
        source: 'nvidia-smi power.draw',
        joules: 1234.5,
        per_gpu: [
          { index: 0, name: null, joules: 800, covered_ms: 900, samples: 4 },
          { index: 1, name: null, joules: 434.5, covered_ms: 900, samples: 4 },
        ],
        window_ms: 1000,
        covered_ms: 900,
        coverage: 0.9,
        joules_window: 1371.7,
        joules_per_request: 137.17,
        joules_per_output_token: 0.0213,
        output_tokens_per_joule: 46.9,
        reason: null,
      }),
    ).toBe(
      'energy: 1235 J (nvidia-smi power.draw, 90 % of the window covered; per GPU 0: 800 J, 1: 435 J); 137 J/request, 0.0213 J/output token, 46.9 output tokens/J',
    );
    expect(energyLine(energyUnavailable('no GPU power, and RAPL: /sys/class/powercap is absent', { start: 0, end: 1 }))).toBe(
      'energy: — (no GPU power, and RAPL: /sys/class/powercap is absent)',
    );
    expect(energyLine(undefined)).toBeNull();
  });

  it('flags throttling with its reasons and share', () => {
    const base = { sm_clock_mhz_mean: 1755, mem_clock_mhz_mean: 2619, reason: null };
    expect(throttleLine({ ...base, throttled: true, reasons: ['sw_power_cap'], share_of_samples: 0.25, samples: 8 })).toBe(
      'THROTTLED: sw_power_cap in 25 % of 8 readings; SM 1755 MHz, memory 2619 MHz',
    );
    expect(throttleLine({ ...base, throttled: false, reasons: [], share_of_samples: 0, samples: 8 })).toBe(
      'clocks: SM 1755 MHz, memory 2619 MHz; not throttled in 8 readings',
    );
  });

  it('reads the bandwidth against its peak', () => {
    const bandwidth = decodeBandwidth({
      footprint: {
        architecture: 'llama',
        blockWeightBytes: 60 * 2 ** 20,
        headWeightBytes: 4 * 2 ** 20,
        embeddingLookupBytes: 0,
        nLayer: 4,
        nHeadKv: 2,
        headDimK: 64,
        headDimV: 64,
        unknownTypeTensors: [],
      },
      placement: { device: 'cpu' },
      kvCacheTypes: { k: 'f16', v: 'f16' },
      meanContextTokens: 100,
      decodeSequences: 1,
      tpotMsMean: 10,
      peak: { gb_per_s: 15, kind: 'cpu probe', label: 'reachable with 2 threads', source: 'probe' },
      peakReason: null,
    });
    expect(bandwidthLine(bandwidth)).toBe(
      'decode bandwidth: 6.73 GB/s, 45 % of 15.0 GB/s reachable with 2 threads (cpu probe); 64 MiB per token (cpu weights 64 MiB + KV 0.20 MiB at 100 tokens of context, f16/f16) × 100 decode tok/s (1.00 sequences at once)',
    );
    expect(bandwidthLine(bandwidthUnavailable('an endpoint run'))).toBe('decode bandwidth: — (an endpoint run)');
  });
});
