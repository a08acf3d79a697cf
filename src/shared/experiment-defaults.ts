/**
 * The one set of experiment defaults: the CLI, the demo and the UI all read these, so the
 * three cannot drift apart. The statistical ones are the values the A/A and A/B simulation
 * tests (test/unit/verdict-simulation.test.ts) prove: at these settings identical conditions
 * are called different at most at the nominal rate, and a 15 % shift is found.
 */
export const EXPERIMENT_DEFAULTS = {
  /** Windows per condition: the unit of replication. */
  repeats: 6,
  /** Measured requests per window: enough for a p95 in every window (PERCENTILE_MIN_N.p95). */
  requestsPerWindow: 32,
  concurrency: 1,
  /** Family-wise confidence of an experiment's verdicts (Holm-corrected). */
  confidence: 0.95,
  /** `equivalent` when the whole interval lies within ± this fraction of the baseline. */
  equivalenceMargin: 0.05,
  /** No verdict below these: fewer windows or requests per side is `insufficient data`. */
  minWindowsPerSide: 3,
  minRequestsPerSide: 8,
  /** Quality gates of the quantization recommendation. */
  gates: {
    /** Mean share of the baseline's greedy tokens reproduced before the first divergence. */
    minTokenAgreement: 0.9,
    /** Mean KL divergence per token against the baseline (nats). */
    maxKld: 0.1,
    /** Acceptance may not be significantly below the baseline's (one-sided, this level). */
    acceptanceAlpha: 0.05,
    /** A candidate is smaller only when it saves at least this share of the baseline's memory (server VRAM, else file size). */
    minMemorySaving: 0.01,
  },
  /** Context size for the KLD pass (llama-perplexity needs ≥ 2 contexts of text). */
  kldContext: 512,
  /** A run whose competing CPU use averaged above this share of one core is contaminated. */
  contentionCpuCores: 0.5,
  warmCold: {
    /** Fresh server starts for cold-process, one measured request each: as many as a verdict needs (minRequestsPerSide). */
    coldStarts: 8,
  },
} as const;

/** Percentiles a sample of n supports: p95 needs n ≥ 20, p99 n ≥ 100 (one sample beyond it). */
export const PERCENTILE_MIN_N = { p50: 1, p90: 10, p95: 20, p99: 100 } as const;

/** Fresh server starts of a warm/cold experiment's cold-process condition: one per window, at least the default. */
export function defaultColdStarts(repeats: number): number {
  return Math.max(repeats, EXPERIMENT_DEFAULTS.warmCold.coldStarts);
}

/**
 * The demo keeps the statistical defaults (windows, requests per window) and shortens the
 * answers instead, to stay within a few minutes on two cores; the cap is part of the
 * workload revision recorded with every run, and printed.
 */
export const DEMO_ANSWER_TOKENS = { quant: 16, warmCold: 8, capacity: 16 } as const;

/** The demo's quantization comparison: the CLI demo's first step and the UI's "Compare the demo quantizations" are this one spec. */
export const DEMO_QUANT_SPEC = {
  kind: 'quant',
  model: 'demo:f16',
  quants: ['f16', 'q8_0', 'q4_k_m'],
  workload: 'chat-short',
  repeats: EXPERIMENT_DEFAULTS.repeats,
  requestsPerWindow: EXPERIMENT_DEFAULTS.requestsPerWindow,
  maxAnswerTokens: DEMO_ANSWER_TOKENS.quant,
} as const;

/** The capacity search's settings: the SLO percentile, the error rate of its sequential looks, and the load ranges it searches. */
export const CAPACITY_DEFAULTS = {
  percentile: 90,
  alpha: 0.05,
  maxSteps: 10,
  maxLooks: 2,
  growth: 2,
  relativeTolerance: 0.15,
  invalidRetries: 2,
  rate: { start: 1, minLoad: 0.05, maxLoad: 500 },
  concurrency: { start: 1, minLoad: 1, maxLoad: 256 },
  users: { start: 1, minLoad: 1, maxLoad: 64 },
  /** Requests per look: this many times the fewest with which a load can be shown to meet. */
  requestsPerLookFactor: 1.5,
} as const;
