import type { GpuSample, TelemetrySummary, TelemetryTick } from '../../shared/contract/telemetry';
import { Emitter } from '../core/emitter';
import { GpuSampler } from './gpu-sampler';
import { MetricsScraper } from './metrics-scraper';
import { ProcessSampler, processTree } from './process-sampler';

export interface TelemetrySeries {
  series: string;
  unit: string;
  /** Interleaved (t, value) pairs; t in ms on the run's clock. */
  points: Float64Array;
}

const mean = (values: number[]) => (values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length);
const max = (values: number[]) => (values.length === 0 ? null : Math.max(...values));
const defined = <T>(values: (T | null)[]) => values.filter((value): value is T => value !== null);

/**
 * Every sampler of one run on one clock: GPU (nvidia-smi loops), the server process tree
 * (/proc) and the server's /metrics. Started before the measured window for an idle
 * baseline; always stopped, whatever happened to the run.
 */
export class TelemetrySession {
  readonly ticks = new Emitter<TelemetryTick>();
  private readonly gpu: GpuSampler;
  private readonly process: ProcessSampler | null;
  private readonly scraper: MetricsScraper | null;
  private tickTimer: NodeJS.Timeout | null = null;
  private windowStart: number | null = null;
  private windowEnd: number | null = null;
  private startedAt = 0;
  private stoppedAt = 0;
  private smiCpuSeconds = 0;
  private stopped = false;

  constructor(
    private readonly options: { clock: () => number; serverPid: number | null; metricsUrl: string | null; intervalMs?: number; gpuBinary?: string | null; retainSamples?: number },
  ) {
    const interval = options.intervalMs ?? 250;
    this.gpu = new GpuSampler(options.clock, interval, options.gpuBinary === undefined ? undefined : options.gpuBinary, options.retainSamples);
    this.process = options.serverPid ? new ProcessSampler(options.serverPid, options.clock, interval) : null;
    this.scraper = options.metricsUrl ? new MetricsScraper(options.metricsUrl, options.clock) : null;
  }

  get intervalMs(): number {
    return this.options.intervalMs ?? 250;
  }

  start(): void {
    this.startedAt = performance.now();
    this.gpu.start();
    this.process?.start();
    this.scraper?.start();
    this.tickTimer = setInterval(() => this.ticks.emit(this.latest()), this.intervalMs);
    this.tickTimer.unref();
  }

  markWindowStart(): void {
    this.windowStart = this.options.clock();
  }

  markWindowEnd(): void {
    this.windowEnd = this.options.clock();
  }

  latest(): TelemetryTick {
    const byGpu = new Map<number, GpuSample>();
    for (const sample of this.gpu.samples.slice(-16)) byGpu.set(sample.index, sample);
    return {
      t: this.options.clock(),
      gpus: [...byGpu.values()],
      serverProcess: this.process?.samples.at(-1) ?? null,
      serverVramMib: this.serverVram(this.gpu.processVram.slice(-16)).at(-1) ?? null,
    };
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.tickTimer) clearInterval(this.tickTimer);
    this.smiCpuSeconds = this.gpu.cpuSeconds();
    this.process?.stop();
    await Promise.all([this.gpu.stop(), this.scraper?.stop()]);
    this.stoppedAt = performance.now();
  }

  private serverPids(): Set<number> {
    return new Set(this.options.serverPid ? processTree(this.options.serverPid) : []);
  }

  /** Per sampling instant, the VRAM held by the server's processes. */
  private serverVram(samples = this.gpu.processVram): number[] {
    const pids = this.serverPids();
    const byTime = new Map<number, number>();
    for (const sample of samples) if (pids.has(sample.pid) && sample.usedMib !== null) byTime.set(sample.t, (byTime.get(sample.t) ?? 0) + sample.usedMib);
    return [...byTime.values()];
  }

  private inWindow(t: number): boolean {
    return this.windowStart !== null && t >= this.windowStart && (this.windowEnd === null || t <= this.windowEnd);
  }

  summary(): TelemetrySummary {
    const wallSeconds = Math.max(0.001, ((this.stoppedAt || performance.now()) - this.startedAt) / 1000);
    const ownCpuSeconds = this.smiCpuSeconds + (this.process?.busyMs ?? 0) / 1000;
    const sampler = { interval_ms: this.intervalMs, cpu_pct: (ownCpuSeconds / wallSeconds) * 100 };
    const reason = this.gpu.unavailableReason ?? (this.gpu.samples.length === 0 ? 'nvidia-smi produced no samples' : null);

    let gpu: TelemetrySummary['gpu'] = null;
    if (!this.gpu.unavailableReason && this.gpu.samples.length > 0) {
      // The GPU the run used is the one whose memory grew the most.
      const indexes = [...new Set(this.gpu.samples.map((sample) => sample.index))];
      const describe = (index: number) => {
        const all = this.gpu.samples.filter((sample) => sample.index === index);
        const baseline = all.filter((sample) => this.windowStart === null || sample.t < this.windowStart);
        const window = all.filter((sample) => this.inWindow(sample.t));
        const baselineUsed = mean(defined(baseline.map((sample) => sample.memoryUsedMib)));
        const peakUsed = max(defined(window.map((sample) => sample.memoryUsedMib)));
        return { all, window, baselineUsed, peakUsed, growth: (peakUsed ?? 0) - (baselineUsed ?? 0) };
      };
      const chosen = indexes.map(describe).sort((a, b) => b.growth - a.growth)[0]!;
      const pids = this.serverPids();
      const windowApps = this.gpu.processVram.filter((sample) => this.inWindow(sample.t));
      const others = windowApps.filter((sample) => !pids.has(sample.pid) && sample.usedMib !== null);
      const otherByTime = new Map<number, number>();
      for (const sample of others) otherByTime.set(sample.t, (otherByTime.get(sample.t) ?? 0) + sample.usedMib!);
      gpu = {
        name: chosen.all[0]?.name ?? 'unknown GPU',
        memory_total_mib: chosen.all[0]?.memoryTotalMib ?? null,
        baseline_used_mib: chosen.baselineUsed,
        peak_used_mib: chosen.peakUsed,
        server_used_mib_peak: max(this.serverVram(windowApps)),
        utilization_pct_mean: mean(defined(chosen.window.map((sample) => sample.utilizationPct))),
        power_w_mean: mean(defined(chosen.window.map((sample) => sample.powerW))),
        samples: chosen.window.length,
        other_processes_vram_mib: max([...otherByTime.values()]),
      };
    }

    let serverProcess: TelemetrySummary['server_process'] = null;
    if (this.process) {
      const window = this.process.samples.filter((sample) => this.inWindow(sample.t));
      serverProcess = { cpu_pct_mean: mean(window.map((sample) => sample.cpuPct)), rss_peak_bytes: max(window.map((sample) => sample.rssBytes)) };
    }

    let serverMetrics: TelemetrySummary['server_metrics'] = null;
    if (this.scraper && this.scraper.samples.length > 0) {
      const samples = this.scraper.samples;
      const before = [...samples].reverse().find((sample) => this.windowStart !== null && sample.t <= this.windowStart) ?? samples[0]!;
      const after = samples[samples.length - 1]!;
      const delta = (key: 'promptTokensTotal' | 'cachedPromptTokensTotal' | 'predictedTokensTotal') => (after[key] === null || before[key] === null ? null : after[key]! - before[key]!);
      const window = samples.filter((sample) => this.inWindow(sample.t));
      serverMetrics = {
        prompt_tokens: delta('promptTokensTotal'),
        cached_prompt_tokens: delta('cachedPromptTokensTotal'),
        predicted_tokens: delta('predictedTokensTotal'),
        requests_processing_max: max(defined(window.map((sample) => sample.requestsProcessing))),
        requests_deferred_max: max(defined(window.map((sample) => sample.requestsDeferred))),
      };
    }
    return { gpu, gpu_unavailable_reason: gpu ? null : reason, server_process: serverProcess, server_metrics: serverMetrics, sampler };
  }

  /** Compact series for storage and export. */
  series(): TelemetrySeries[] {
    const pack = (pairs: [number, number | null][]) => {
      const kept = pairs.filter((pair): pair is [number, number] => pair[1] !== null);
      return Float64Array.from(kept.flat());
    };
    const result: TelemetrySeries[] = [];
    for (const index of [...new Set(this.gpu.samples.map((sample) => sample.index))]) {
      const samples = this.gpu.samples.filter((sample) => sample.index === index);
      result.push(
        { series: `gpu${index}.memory_used`, unit: 'MiB', points: pack(samples.map((s) => [s.t, s.memoryUsedMib])) },
        { series: `gpu${index}.utilization`, unit: '%', points: pack(samples.map((s) => [s.t, s.utilizationPct])) },
        { series: `gpu${index}.power`, unit: 'W', points: pack(samples.map((s) => [s.t, s.powerW])) },
      );
    }
    if (this.process) {
      result.push(
        { series: 'server.cpu', unit: '%', points: pack(this.process.samples.map((s) => [s.t, s.cpuPct])) },
        { series: 'server.rss', unit: 'bytes', points: pack(this.process.samples.map((s) => [s.t, s.rssBytes])) },
      );
    }
    if (this.scraper) {
      result.push(
        { series: 'metrics.predicted_tokens_total', unit: 'tokens', points: pack(this.scraper.samples.map((s) => [s.t, s.predictedTokensTotal])) },
        { series: 'metrics.requests_processing', unit: 'requests', points: pack(this.scraper.samples.map((s) => [s.t, s.requestsProcessing])) },
      );
    }
    return result.filter((entry) => entry.points.length > 0);
  }
}
