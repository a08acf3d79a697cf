import type { ConditionResult } from '../../src/shared/contract/experiments';
import type { Distribution } from '../../src/shared/contract/runs';

const MIB = 2 ** 20;

/** A constructed distribution: p50 as given, p95 half as much again where n supports it. */
export function distribution(n: number, p50: number, p95: number | null = n >= 20 ? p50 * 1.5 : null): Distribution {
  return { n, mean: p50, std: 1, p50, p90: null, p95, p99: null, min: p50 / 2, max: p50 * 2, unsupported: p95 === null ? ['p95'] : [] };
}

/**
 * A constructed condition of an experiment: n requests at the given TPOT and TTFT p50, a 1000 MiB
 * file, agreement 1 and KLD 0 against its baseline, 30 of 32 accepted; `patch` overrides any field.
 */
export function conditionResult(
  name: string,
  patch: Partial<ConditionResult> & { n?: number; tpot?: number; ttft?: number } = {},
): ConditionResult {
  const { n = 32, tpot = 10, ttft = 100, ...rest } = patch;
  return {
    name,
    run_ids: [],
    metrics: {
      ttft_ms: distribution(n, ttft),
      tpot_ms: distribution(n, tpot),
      itl_ms: distribution(n, tpot),
      e2e_ms: distribution(n, ttft + 40 * tpot),
      queue_ms: distribution(n, 1),
      client_overhead_ms: distribution(n, 1),
    },
    throughput: { requests_per_s: 1, output_tokens_per_s: 40 },
    accepted_rate: null,
    requests: { attempted: n, completed: n, failed: 0 },
    evidence: { cached_prompt_tokens: 0, prompt_tokens: 0, timings_cache_n_max: null, metrics_cached_prompt_tokens: null },
    contaminated: false,
    contamination_reason: null,
    file_bytes: 1000 * MIB,
    vram: { baseline_mib: null, peak_mib: null, server_mib: null },
    token_agreement: { mean: 1, exact_match_rate: 1, first_divergence_index_mean: null, items: 8 },
    kld_mean: 0,
    kld_tokens: 1400,
    kld_context: 512,
    acceptance: { accepted: 30, judged: 32 },
    ...rest,
  };
}
