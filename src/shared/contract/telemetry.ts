/** One reading of one GPU, stamped on the run's monotonic clock (ms). */
export interface GpuSample {
  t: number;
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
}

export interface ProcessVramSample {
  t: number;
  pid: number;
  usedMib: number | null;
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
  gpu: {
    name: string;
    memory_total_mib: number | null;
    baseline_used_mib: number | null;
    peak_used_mib: number | null;
    server_used_mib_peak: number | null;
    utilization_pct_mean: number | null;
    power_w_mean: number | null;
    samples: number;
    other_processes_vram_mib: number | null;
  } | null;
  gpu_unavailable_reason: string | null;
  server_process: { cpu_pct_mean: number | null; rss_peak_bytes: number | null } | null;
  server_metrics: { prompt_tokens: number | null; cached_prompt_tokens: number | null; predicted_tokens: number | null; requests_processing_max: number | null; requests_deferred_max: number | null } | null;
  sampler: { interval_ms: number; cpu_pct: number };
}

/** A live snapshot for the UI: the latest values, pushed at 4 Hz during runs, 1 Hz idle. */
export interface TelemetryTick {
  t: number;
  gpus: GpuSample[];
  serverProcess: ProcessSample | null;
  serverVramMib: number | null;
}
