import type { Db } from '../../src/main/store/database';
import { ExperimentStore } from '../../src/main/store/experiment-store';
import type { Distribution } from '../../src/shared/contract/runs';
import type { ConditionResult, ExperimentResult, VerdictRow } from '../../src/shared/contract/experiments';
import { sharedProtocolFields } from './experiment-result';

const MIB = 2 ** 20;

/** What two competing processes make of a window on a two-core machine, as the condition summary words it. */
export const LONG_CONTAMINATION_REASON =
  'other processes competed during 2 of 3 window(s): run 3f2a9c1d: other processes used 1.42 CPU cores on average ' +
  '(threshold 0.5; 2 cores in all): pid 4121 node 0.91, pid 3310 chromium 0.38, pid 2207 esbuild 0.13; ' +
  'run 8b04e6aa: another llama-server (pid 5120) was busy, 0.97 cores on average';

const distribution = (p50: number): Distribution => ({
  n: 60,
  mean: p50 * 1.02,
  std: p50 * 0.08,
  p50,
  p90: p50 * 1.2,
  p95: p50 * 1.3,
  p99: p50 * 1.5,
  min: p50 * 0.8,
  max: p50 * 1.6,
  unsupported: [],
});

function condition(name: string, tpot: number, fileMib: number, extra: Partial<ConditionResult> = {}): ConditionResult {
  return {
    name,
    run_ids: [0, 1, 2].map((window) => `${name}-window-${window}`),
    metrics: {
      ttft_ms: distribution(tpot * 6),
      tpot_ms: distribution(tpot),
      itl_ms: distribution(tpot),
      e2e_ms: distribution(tpot * 40),
      queue_ms: distribution(0.4),
      client_overhead_ms: distribution(0.2),
    },
    throughput: {
      requests_per_s: 25 / tpot,
      output_tokens_per_s: 1000 / tpot,
      output_tokens_per_s_ci: [900 / tpot, 1100 / tpot],
      windows: 3,
    },
    accepted_rate: 1,
    requests: { attempted: 60, completed: 60, failed: 0 },
    evidence: { cached_prompt_tokens: 0, prompt_tokens: 1440, timings_cache_n_max: 0, metrics_cached_prompt_tokens: null },
    contaminated: false,
    contamination_reason: null,
    delivery: [0, 1, 2].map(() => ({ judged_requests: 20, bunched_requests: 0 })),
    offload_warning: null,
    efficiency: {
      joules_per_output_token: null,
      joules_per_output_token_ci: null,
      energy_windows: 0,
      energy_reason: 'no energy reading: no NVIDIA GPU and the RAPL counters are not readable',
      decode_gb_per_s: 9.6 / tpot,
      bandwidth_utilization: 0.9 / tpot,
      bandwidth_peak: 'reachable with 2 threads (probe)',
      bandwidth_windows: 3,
      bandwidth_reason: null,
    },
    file_bytes: fileMib * MIB,
    load_ms: 120 + fileMib,
    vram: { baseline_mib: null, peak_mib: null, server_mib: null },
    agreement_with_baseline: name === 'f16' ? 1 : 0.9,
    kld_mean: name === 'f16' ? 0 : fileMib < 40 ? 0.021 : 0.0042,
    same_top_p: name === 'f16' ? 1 : 0.95,
    ...extra,
  };
}

/** A decided verdict between two conditions (constructed figures, its interval around the difference). */
const decided = (metric: string, a: string, b: string, aValue: number, bValue: number, verdict: VerdictRow['verdict']): VerdictRow => {
  const relative = bValue / aValue - 1;
  // An interval that excludes zero for a difference, and holds zero but reaches past the ±5 % margin otherwise.
  const half = verdict === 'no significant difference' ? 0.08 : 0.03;
  return {
    metric,
    a,
    b,
    a_value: aValue,
    b_value: bValue,
    difference: bValue - aValue,
    ci: [bValue - aValue - half * aValue, bValue - aValue + half * aValue],
    verdict,
    relative_difference: relative,
    relative_ci: [relative - half, relative + half],
    confidence: 0.9833,
    equivalence_margin: 0.05,
    windows: [6, 6],
    requests: [192, 192],
    note: null,
  };
};

/** A verdict the contaminated baseline withholds, as `conditionVerdicts` words it. */
const withheld = (metric: string, b: string): VerdictRow => ({
  metric,
  a: 'f16',
  b,
  a_value: null,
  b_value: null,
  difference: null,
  ci: null,
  verdict: 'insufficient data',
  relative_difference: null,
  relative_ci: null,
  confidence: null,
  equivalence_margin: 0.05,
  windows: [3, 3],
  requests: [60, 60],
  note: 'no verdict: f16 is contaminated (see its condition row)',
});

/**
 * The demo's quantization result as the store holds it once finished (constructed): f16 as the
 * baseline with a contamination note as long as a busy two-core machine writes, q8_0 and q4_k_m
 * faster, every verdict against the baseline withheld, a KLD gate. Returns the experiment's id.
 */
export function storeQuantExperiment(db: Db): string {
  const experiments = new ExperimentStore(db);
  const protocol = { ...sharedProtocolFields('quant'), base: 'demo:f16', quants: ['Q8_0', 'Q4_K_M'], files: [] };
  const id = experiments.create('quant', protocol);
  const conditions = [
    condition('f16', 3.1, 87, { contaminated: true, contamination_reason: LONG_CONTAMINATION_REASON }),
    condition('q8_0', 2.3, 47),
    condition('q4_k_m', 1.8, 30),
  ];
  const result = {
    experiment_id: id,
    kind: 'quant',
    status: 'completed',
    protocol,
    conditions,
    verdicts: ['q8_0', 'q4_k_m'].flatMap((name) =>
      ['ttft_ms p50', 'ttft_ms p95', 'tpot_ms p50', 'tpot_ms p95'].map((metric) => withheld(metric, name)),
    ),
    recommendation: {
      choice: 'q4_k_m',
      reason: 'fastest TPOT p50 among the conditions within every gate',
      excluded: [{ name: 'f16', reason: 'contaminated: other processes competed for the cores' }],
      objective: 'TPOT p50, lower is better',
      gates: [
        {
          name: 'kld',
          threshold: 'mean KL divergence ≤ 0.05 nats per token',
          conditions: conditions.map((entry) => ({
            name: entry.name,
            value: entry.kld_mean ?? null,
            status: 'pass',
            detail: 'within the gate',
          })),
        },
      ],
    },
  } as ExperimentResult;
  experiments.finish(id, 'completed', result);
  return id;
}

/** An adapter experiment served both ways, as the store holds it once finished (constructed): the base model, the demo adapter on its own server and swapped. */
export function storeAdapterExperiment(db: Db): string {
  const experiments = new ExperimentStore(db);
  const adapterPath = '/home/someone/.local/share/inferlab/demo-models/demo-lora.gguf';
  const protocol = {
    ...sharedProtocolFields('adapter'),
    model: 'demo:q8_0',
    adapters: [{ name: 'demo-lora@0.5', file: 'demo:lora', path: adapterPath, scale: 0.5 }],
    serving: 'both',
  };
  const id = experiments.create('adapter', protocol);
  const agreement = (mean: number) => ({ mean, exact_match_rate: mean, first_divergence_index_mean: null, items: 12 });
  const conditions = [
    condition('base', 2.2, 47, { lora: null, lora_mib: null, server_load_ms: 294, token_agreement: agreement(1), kld_mean: 0 }),
    condition('demo-lora@0.5', 2.5, 47, {
      lora: { file: 'demo:lora', scale: 0.5 },
      lora_mib: 0.11,
      server_load_ms: 270,
      token_agreement: agreement(1),
      kld_mean: 1.2e-6,
      acceptance: { accepted: 31, judged: 32 },
    }),
    condition('demo-lora@0.5 swapped', 2.4, 47, {
      lora: { file: 'demo:lora', scale: 0.5, swapped: true },
      lora_mib: 0.11,
      server_load_ms: 281,
      token_agreement: agreement(1),
      kld_mean: 1.2e-6,
      acceptance: { accepted: 32, judged: 32 },
    }),
  ];
  const result = {
    experiment_id: id,
    kind: 'adapter',
    status: 'completed',
    protocol,
    conditions,
    verdicts: [
      decided('tpot_ms p50', 'base', 'demo-lora@0.5', 2.2, 2.5, 'slower'),
      decided('tpot_ms p50', 'base', 'demo-lora@0.5 swapped', 2.2, 2.4, 'slower'),
      decided('tpot_ms p50', 'demo-lora@0.5', 'demo-lora@0.5 swapped', 2.5, 2.4, 'no significant difference'),
    ],
    recommendation: {
      choice: 'demo-lora@0.5 swapped',
      reason: 'demo-lora@0.5 swapped passes every gate.',
      excluded: [],
      objective: 'lowest TPOT p50 among the adapters that pass every gate, then TTFT p50',
      gates: [],
    },
  } as unknown as ExperimentResult;
  experiments.finish(id, 'completed', result);
  return id;
}
