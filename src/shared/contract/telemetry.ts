/**
 * One reading of one GPU, stamped on the run's monotonic clock (ms): nvidia-smi's own
 * timestamp of the query mapped onto that clock, or the arrival time where it has none.
 */
export interface GpuSample {
  t: number;
  /** Readings taken in one pass over the GPUs share this number (absent from amd-smi's older readers). */
  sweep?: number;
  index: number;
  uuid: string | null;
  name: string | null;
  memoryUsedMib: number | null;
  memoryTotalMib: number | null;
  utilizationPct: number | null;
  memoryUtilizationPct: number | null;
  temperatureC: number | null;
  powerW: number | null;
  smClockMhz: number | null;
  pstate: string | null;
  /** Absent from readings recorded before the memory clock was queried. */
  memClockMhz?: number | null;
  /** nvidia-smi clocks_throttle_reasons.active (NVML's clocks event reasons bitmask); absent from older readings. */
  throttleReasons?: number | null;
  /** A GPU exporter's reading: which of the exporter's own collections it shows (`t` is when the page was asked for). */
  collection?: ExporterCollection;
}

/**
 * One collection of a GPU exporter, which serves it on every scrape until it collects again
 * (dcgm-exporter every 30 s by default). It was taken within [earliest, latest] on the run's
 * clock: at the page's own timestamps where it gives them (`stamped`), else after the read
 * before the one that first showed it (`earliest`; null for the first page read, whose age is
 * unknown) and by that read. `repeat` marks every read of it after the first.
 */
export interface ExporterCollection {
  id: number;
  earliest: number | null;
  latest: number;
  stamped: boolean;
  repeat: boolean;
}

export interface ProcessVramSample {
  t: number;
  /** Lines of one pass over the compute processes share this number. */
  sweep?: number;
  pid: number;
  usedMib: number | null;
  gpuUuid?: string | null;
  name?: string | null;
}

/** One interval of what competed with a run (see src/main/telemetry/contention.ts). */
export interface ContentionSample {
  /** End of the interval, ms on the run's clock. */
  t: number;
  interval_ms: number;
  /** CPU time of everything outside the run's server tree and this process, in cores. */
  other_cpu_cores: number;
  processes: { pid: number; command: string; cores: number }[];
  llama_servers: { pid: number; command: string; cores: number }[];
  gpu_processes: { pid: number; command: string; used_mib: number | null }[];
}

/** What competed with a run over its measured window, and whether that spoils it. */
export interface ContentionSummary {
  interval_ms: number;
  samples: number;
  cpus: number;
  threshold_cpu_cores: number;
  llama_server_busy_cores: number;
  other_cpu_cores_mean: number | null;
  /** null when the window holds fewer samples than a p95 needs (see PERCENTILE_MIN_N). */
  other_cpu_cores_p95: number | null;
  other_cpu_cores_max: number | null;
  top_processes: { pid: number; command: string; cpu_cores_mean: number }[];
  other_llama_servers: { pid: number; command: string; cpu_cores_mean: number; busy: boolean }[];
  other_gpu_processes: { pid: number; command: string; used_mib_max: number | null }[];
  contaminated: boolean;
  reason: string | null;
  /** Why nothing was measured (no /proc, no samples in the window); contaminated is then false. */
  unavailable_reason: string | null;
}

export interface ProcessSample {
  t: number;
  cpuPct: number;
  rssBytes: number;
}

export interface ServerMetricsSample {
  t: number;
  promptTokensTotal: number | null;
  cachedPromptTokensTotal: number | null;
  predictedTokensTotal: number | null;
  requestsProcessing: number | null;
  requestsDeferred: number | null;
}

/** The `telemetry` block of a run summary. `null` GPU figures always come with a reason. */
export interface TelemetrySummary {
  /**
   * Memory figures sum the run's GPUs at each sampling instant (a model split across GPUs
   * counts whole): every GPU, or those the profile chose (chosen_indexes). Baseline: the idle
   * sampling before the window (≥ 1 s), after the server loaded; before_load: the same GPUs
   * just before the server process was spawned.
   */
  gpu: {
    name: string;
    gpu_count?: number;
    /** The GPUs the profile confined the server to (gpuDevices); the rest of per_gpu is other GPU activity. Absent: every GPU. */
    chosen_indexes?: number[];
    memory_total_mib: number | null;
    before_load_used_mib?: number | null;
    baseline_used_mib: number | null;
    peak_used_mib: number | null;
    /** The server's own VRAM (its process tree, all GPUs) from the per-process query; peak over the window. */
    server_used_mib_peak: number | null;
    server_used_mib_mean?: number | null;
    utilization_pct_mean: number | null;
    power_w_mean: number | null;
    samples: number;
    baseline_samples?: number;
    other_processes_vram_mib: number | null;
    /** Samples placed by nvidia-smi's own timestamp vs. by arrival (no or implausible timestamp). */
    timestamps?: { device: number; arrival: number };
    /** Set when sampling stopped part-way (nvidia-smi kept exiting): the figures cover what was sampled. */
    sampling_failure?: string | null;
    /** Why figures are missing or how they were read, where the tool said (amd-smi's "N/A", a fallback). */
    sampling_notes?: string[];
    per_gpu?: {
      index: number;
      /** The machine the GPU is on, where a GPU exporter labels it (--gpu-metrics-url). */
      host?: string | null;
      name: string | null;
      memory_total_mib: number | null;
      baseline_used_mib: number | null;
      peak_used_mib: number | null;
      utilization_pct_mean: number | null;
    }[];
  } | null;
  gpu_unavailable_reason: string | null;
  server_process: { cpu_pct_mean: number | null; rss_peak_bytes: number | null } | null;
  server_metrics: {
    prompt_tokens: number | null;
    cached_prompt_tokens: number | null;
    predicted_tokens: number | null;
    requests_processing_max: number | null;
    requests_deferred_max: number | null;
  } | null;
  sampler: { interval_ms: number; cpu_pct: number };
  /** The measured window on the run's clock: it opens after warmup; the idle baseline precedes it. */
  window?: { start_ms: number | null; end_ms: number | null; baseline_ms: number | null };
  /** Absent from runs stored before it was measured. */
  contention?: ContentionSummary | null;
  /** Energy over the measured window; absent from runs stored before it was measured. */
  energy?: EnergySummary;
  /** Clock slowdowns over the measured window (GPU only); absent from runs stored before it was measured. */
  throttle?: ThrottleSummary;
}

/** Energy of the measured window: GPU power integrated over time, else CPU package RAPL counters. */
export interface EnergySummary {
  source: 'nvidia-smi power.draw' | 'amd-smi socket_power' | 'dcgm-exporter power' | 'amd-device-metrics-exporter power' | 'rapl' | null;
  /** Over the GPUs the server ran on (all GPUs when that is unknown), or every CPU package. */
  joules: number | null;
  per_gpu: { index: number; name: string | null; joules: number | null; covered_ms: number; samples: number }[] | null;
  window_ms: number | null;
  /** The span the integration covers (first to last reading in the window, GPU); the whole window for RAPL. */
  covered_ms: number | null;
  /** covered_ms / window_ms. */
  coverage: number | null;
  rapl_domains?: string[];
  /** joules × window_ms / covered_ms: the covered span's mean power over the whole window; what the ratios divide. */
  joules_window?: number | null;
  /** Per completed request and per output token of the completed requests (docs/METRICS.md). */
  joules_per_request: number | null;
  joules_per_output_token: number | null;
  output_tokens_per_joule: number | null;
  /** Why joules is null, or, with context_only, why the readings are not this run's. */
  reason: string | null;
  /**
   * Set when the engine did not run on the GPUs read (a CPU engine on a GPU box): joules is their
   * energy over the window, shown as context, and the per-work ratios are null (absent in older records).
   */
  context_only?: boolean;
}

export interface ThrottleSummary {
  /** Whether any window sample had a slowing reason (power cap, thermal, hardware slowdown, power brake); null when unknown. */
  throttled: boolean | null;
  /** The slowing reasons seen, by nvidia-smi's names, in bit order. */
  reasons: string[];
  /** Readings (per GPU) with a slowing reason over readings with a reasons mask. */
  share_of_samples: number | null;
  samples: number;
  sm_clock_mhz_mean: number | null;
  mem_clock_mhz_mean: number | null;
  reason: string | null;
}

/** A live snapshot for the UI: the latest values, pushed at 4 Hz during runs, 1 Hz idle. */
export interface TelemetryTick {
  t: number;
  gpus: GpuSample[];
  serverProcess: ProcessSample | null;
  serverVramMib: number | null;
  /** The server's newest /metrics reading (scraped once a second), when it has /metrics. */
  serverMetrics?: ServerMetricsSample | null;
}
