import type { GpuSample, ProcessVramSample, TelemetrySummary, TelemetryTick } from '../../shared/contract/telemetry';
import { EXPERIMENT_DEFAULTS } from '../../shared/experiment-defaults';
import { Emitter } from '../core/emitter';
import { ContentionSampler, summarizeContention } from './contention';
import { collectedReadings, exporterWindow } from './exporter-window';
import { GpuSampler, type EarlyGpuLoops } from './gpu-sampler';
import { llamaServerOnPort, localPort } from './proc-stat';
import { MetricsScraper } from './metrics-scraper';
import { ProcessSampler, processTree } from './process-sampler';
import { RaplMeter } from './rapl';
import { MAC_POWER_NOTE } from './ioreg-parse';
import { energyUnavailable, gpuWindowEnergy, raplWindowEnergy, throttleSummary } from './window-energy';

export interface TelemetrySeries {
  series: string;
  unit: string;
  /** Interleaved (t, value) pairs; t in ms on the run's clock. */
  points: Float64Array;
}

/**
 * The idle baseline spans at least a second, or this many of the GPU source's intervals where that
 * is shorter: four readings are enough for an idle memory and the idle temperature and clocks a
 * cooldown waits for, so a faster interval (a setting) shortens every run's wait without thinning
 * the baseline, and a slow one is not stretched to four of its readings.
 */
export const BASELINE_INTERVALS = 4;
const BASELINE_CAP_MS = 1000;
const CONTENTION_MIN_INTERVAL_MS = 500;
/** RAPL counters wrap after minutes at full load; read far more often than that. */
const RAPL_READ_MS = 1000;
/** Waiting for a slow nvidia-smi to cover the baseline ends here. */
const MAX_BASELINE_WAIT_MS = 10_000;

const mean = (values: number[]) => (values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length);
const max = (values: number[]) => (values.length === 0 ? null : Math.max(...values));
const defined = <T>(values: (T | null | undefined)[]) => values.filter((value): value is T => value !== null && value !== undefined);

/** Groups samples by their pass over the GPUs (or processes); samples without one stand alone. */
function bySweep<T extends { t: number; sweep?: number }>(samples: readonly T[]): { t: number; samples: T[] }[] {
  const groups = new Map<string, { t: number; samples: T[] }>();
  for (const sample of samples) {
    const key = sample.sweep === undefined ? `t${sample.t}` : `s${sample.sweep}`;
    const group = groups.get(key);
    if (group) group.samples.push(sample);
    else groups.set(key, { t: sample.t, samples: [sample] });
  }
  return [...groups.values()];
}

/** A sum over the GPUs of one pass; null when no GPU reported the figure. */
function sumOf(samples: readonly GpuSample[], pick: (sample: GpuSample) => number | null): number | null {
  const values = defined(samples.map(pick));
  return values.length === 0 ? null : values.reduce((a, b) => a + b, 0);
}

/**
 * Every sampler of one run on one clock: GPU (nvidia-smi loops), the server process tree
 * (/proc), the server's /metrics and the competition for the machine. Started before the
 * measured window for an idle baseline; always stopped, whatever happened to the run.
 *
 * The run's timeline: start() → idle baseline (≥ 1 s, or 4 GPU intervals where shorter, from start() with a GPU tool, server loaded,
 * nothing generated: the workload may be tokenized meanwhile) → warmup (neither baseline nor window) →
 * markWindowStart() → measured requests → markWindowEnd().
 */
export class TelemetrySession {
  readonly ticks = new Emitter<TelemetryTick>();
  private readonly gpu: GpuSampler;
  private readonly process: ProcessSampler | null;
  private readonly scraper: MetricsScraper | null;
  private readonly contention: ContentionSampler;
  private tickTimer: NodeJS.Timeout | null = null;
  private baselineStart: number | null = null;
  private baselineEnd: number | null = null;
  private windowStart: number | null = null;
  private windowEnd: number | null = null;
  private startedAt = 0;
  private stoppedAt = 0;
  private smiCpuSeconds = 0;
  private stopped = false;
  private readonly serverTreeSeen = new Set<number>();
  private boundaryScrape: Promise<void> | null = null;
  /** On-demand GPU readings at the window's edges, awaited before the samplers stop. */
  private readonly edgeReadings: Promise<void>[] = [];
  private readonly rapl: RaplMeter;
  private raplTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly options: {
      clock: () => number;
      serverPid: number | null;
      metricsUrl: string | null;
      /** The managed server's API key, which /metrics requires. */
      metricsHeaders?: Readonly<Record<string, string>>;
      intervalMs?: number;
      gpuBinary?: string | null;
      retainSamples?: number;
      /** Used GPU memory over all GPUs just before the run's server was spawned. */
      beforeLoadUsedMib?: number | null;
      /** Where /proc is (a fake tree in tests). */
      procRoot?: string;
      contentionThresholdCores?: number;
      /** A run against an endpoint: a llama-server listening there on this machine is the run's own. */
      endpointUrl?: string | null;
      /** Where the RAPL counters are (a fake tree in tests). */
      powercapRoot?: string;
      /** A GPU exporter's Prometheus page, read instead of this machine's GPUs (a server on another machine). */
      gpuMetricsUrl?: string | null;
      /** The GPUs the server was confined to (the profile's gpuDevices); null or absent: every GPU counts. */
      gpuIndexes?: readonly number[] | null;
      /** nvidia-smi loops begun while the server loaded, taken over when sampling starts. */
      earlyGpuLoops?: EarlyGpuLoops | null;
    },
  ) {
    this.rapl = new RaplMeter(options.powercapRoot);
    const interval = options.intervalMs ?? 250;
    this.gpu = new GpuSampler(
      options.clock,
      interval,
      options.gpuBinary === undefined ? undefined : options.gpuBinary,
      options.retainSamples,
      options.gpuMetricsUrl ?? null,
      options.earlyGpuLoops ?? null,
    );
    this.process = options.serverPid ? new ProcessSampler(options.serverPid, options.clock, interval) : null;
    this.scraper = options.metricsUrl ? new MetricsScraper(options.metricsUrl, options.clock, undefined, options.metricsHeaders) : null;
    this.contention = new ContentionSampler({
      clock: options.clock,
      serverPid: options.serverPid ?? endpointServerPid(options.endpointUrl ?? null, options.procRoot),
      selfPids: () => [process.pid, ...this.gpu.pids()],
      gpuProcesses: () => this.latestProcessSweep(),
      procRoot: options.procRoot,
      // Reading every process's stat costs a few ms per tick on a loaded machine: half the GPU rate keeps it near 1 % of a core.
      intervalMs: Math.max(CONTENTION_MIN_INTERVAL_MS, interval),
    });
  }

  get intervalMs(): number {
    return this.options.intervalMs ?? 250;
  }

  /** The shortest idle baseline at this session's GPU interval: BASELINE_INTERVALS of it, at most a second. */
  get minimumBaselineMs(): number {
    return Math.min(BASELINE_CAP_MS, BASELINE_INTERVALS * this.gpu.sampleIntervalMs);
  }

  start(): void {
    this.startedAt = performance.now();
    this.baselineStart = this.options.clock();
    this.gpu.start();
    this.process?.start();
    this.scraper?.start();
    this.contention.start();
    this.tickTimer = setInterval(() => {
      this.trimContention();
      this.ticks.emit(this.latest());
    }, this.intervalMs);
    this.tickTimer.unref();
  }

  private trimContention(): void {
    const retain = this.options.retainSamples;
    if (retain !== undefined && this.contention.samples.length > retain)
      this.contention.samples.splice(0, this.contention.samples.length - retain);
  }

  /**
   * Idle sampling before anything is generated: at least minimumBaselineMs from start() (callers
   * asking for less get that), and, with a GPU, until its samples span that long (nvidia-smi can
   * take seconds to start), up to a cap. Counted from start(), not from this call, so the run's
   * own preparation between the two (tokenizing the workload) hides the GPU tool's start instead
   * of adding to it. None where no GPU tool exists: every run on such a machine would wait a
   * second for nothing. Marks where the baseline ends.
   */
  async idleBaseline(requestedMs = 0): Promise<void> {
    const begun = this.baselineStart ?? this.options.clock();
    // Only GPU figures (idle memory, the cooldown's idle temperature and clocks) come from the baseline.
    if (this.gpu.hasNoSource) {
      this.baselineEnd = begun;
      return;
    }
    const wanted = Math.max(this.minimumBaselineMs, requestedMs);
    const elapsed = () => this.options.clock() - begun;
    const covered = () => {
      if (elapsed() < wanted) return false;
      // A loop between restarts has no process to wait on. An exporter has none either, and the run does
      // not wait on its reads: a restarting exporter answers 503 for as long as it takes.
      if (this.gpu.unavailableReason || this.gpu.pids().length === 0) return true;
      const samples = this.gpu.samples;
      return samples.length > 0 && samples[samples.length - 1]!.t - samples[0]!.t >= wanted;
    };
    if (elapsed() < wanted) await delay(wanted - elapsed());
    while (!covered() && elapsed() < MAX_BASELINE_WAIT_MS) await this.nextGpuSampleOr(Math.min(100, this.intervalMs));
    this.baselineEnd = this.options.clock();
  }

  /** Until the next GPU sample arrives (the one that may complete the baseline's span), or `ms` at most. */
  private nextGpuSampleOr(ms: number): Promise<void> {
    return new Promise((resolve) => {
      let stopListening = () => {};
      const timer = setTimeout(() => {
        stopListening();
        resolve();
      }, ms);
      stopListening = this.gpu.changes.on(() => {
        clearTimeout(timer);
        stopListening();
        resolve();
      });
    });
  }

  /** Opens the measured window (after warmup); counters are read again at the boundary. */
  markWindowStart(): void {
    const t = this.options.clock();
    this.windowStart = t;
    // Stamped with the boundary itself, so the window's counters start from this reading.
    this.boundaryScrape = this.scraper?.scrape(t) ?? null;
    // An exporter is read every second or slower, so a one-second run could fall between two reads.
    if (this.options.gpuMetricsUrl) this.edgeReadings.push(this.gpu.readNow(t));
    this.rememberServerTree();
    this.rapl.start();
    this.raplTimer = setInterval(() => this.rapl.read(), RAPL_READ_MS);
    this.raplTimer.unref();
  }

  markWindowEnd(): void {
    const t = this.options.clock();
    this.windowEnd = t;
    // nvidia-smi is read once more only where its loop left the window empty: started at the
    // window's opening, it would compete with the first requests.
    if (this.options.gpuMetricsUrl || !this.gpu.samples.some((sample) => this.inWindow(sample.t)))
      this.edgeReadings.push(this.gpu.readNow(t));
    this.stopRapl();
    this.rememberServerTree();
  }

  private stopRapl(): void {
    if (!this.raplTimer) return;
    clearInterval(this.raplTimer);
    this.raplTimer = null;
    this.rapl.read();
  }

  private rememberServerTree(): void {
    if (this.options.serverPid) for (const pid of processTree(this.options.serverPid)) this.serverTreeSeen.add(pid);
  }

  latest(): TelemetryTick {
    const byGpu = new Map<number, GpuSample>();
    for (const sample of this.gpu.samples.slice(-16)) byGpu.set(sample.index, sample);
    const lastSweep = bySweep(this.gpu.processVram.slice(-32)).at(-1);
    return {
      t: this.options.clock(),
      gpus: [...byGpu.values()],
      serverProcess: this.process?.samples.at(-1) ?? null,
      serverVramMib: lastSweep ? this.serverVramOf(lastSweep.samples, this.serverPids()) : null,
      serverMetrics: this.scraper?.samples.at(-1) ?? null,
    };
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.tickTimer) clearInterval(this.tickTimer);
    this.stopRapl();
    this.smiCpuSeconds = this.gpu.cpuSeconds();
    this.rememberServerTree();
    this.process?.stop();
    this.contention.stop();
    await Promise.all([this.boundaryScrape, ...this.edgeReadings]);
    await Promise.all([this.gpu.stop(), this.scraper?.stop()]);
    this.stoppedAt = performance.now();
  }

  private serverPids(): Set<number> {
    const pids = new Set(this.serverTreeSeen);
    if (this.options.serverPid) for (const pid of processTree(this.options.serverPid)) pids.add(pid);
    return pids;
  }

  private latestProcessSweep(): ProcessVramSample[] {
    return bySweep(this.gpu.processVram.slice(-32)).at(-1)?.samples ?? [];
  }

  /** The server tree's VRAM in one pass: every process of the tree, on every GPU; null when none is listed. */
  private serverVramOf(samples: readonly ProcessVramSample[], pids: Set<number>): number | null {
    const mine = samples.filter((sample) => pids.has(sample.pid) && sample.usedMib !== null);
    return mine.length === 0 ? null : mine.reduce((sum, sample) => sum + sample.usedMib!, 0);
  }

  private inWindow(t: number): boolean {
    return this.windowStart !== null && t >= this.windowStart && (this.windowEnd === null || t <= this.windowEnd);
  }

  private inBaseline(t: number): boolean {
    const end = this.baselineEnd ?? this.windowStart;
    return end !== null && t < end && (this.baselineStart === null || t >= this.baselineStart - this.intervalMs);
  }

  summary(): TelemetrySummary {
    const wallSeconds = Math.max(0.001, ((this.stoppedAt || performance.now()) - this.startedAt) / 1000);
    const ownCpuSeconds = this.smiCpuSeconds + ((this.process?.busyMs ?? 0) + this.contention.busyMs) / 1000;
    const sampler = { interval_ms: this.intervalMs, cpu_pct: (ownCpuSeconds / wallSeconds) * 100 };
    const reason =
      this.gpu.unavailableReason ??
      (this.gpu.samples.length === 0 ? `${this.options.gpuMetricsUrl ? 'the GPU exporter' : 'nvidia-smi'} produced no samples` : null);
    const measuredWindow = { start: this.windowStart, end: this.windowEnd };
    const unclosed = this.windowEnd === null ? energyUnavailable('the measured window did not close', measuredWindow) : null;
    // A loop that gave up mid-run still leaves what it sampled; the failure is kept beside it.
    const onGpu = this.gpu.samples.length > 0 ? this.gpuSummary(measuredWindow) : null;
    const energy = unclosed ?? onGpu?.energy ?? raplWindowEnergy(this.rapl.result(), measuredWindow);
    const throttle = onGpu ? onGpu.throttle : { ...throttleSummary([]), reason: `no GPU telemetry (${reason})` };
    const contention = summarizeContention(this.contention.samples, {
      windowStart: this.windowStart,
      windowEnd: this.windowEnd,
      thresholdCores: this.options.contentionThresholdCores ?? EXPERIMENT_DEFAULTS.contentionCpuCores,
      intervalMs: this.contention.intervalMs,
      cpus: this.contention.cpuCount,
      unavailableReason: this.contention.unavailableReason,
    });
    const baselineMs = this.baselineEnd !== null && this.baselineStart !== null ? this.baselineEnd - this.baselineStart : null;
    return {
      gpu: onGpu?.gpu ?? null,
      gpu_unavailable_reason: onGpu ? null : reason,
      server_process: this.serverProcessSummary(),
      server_metrics: this.serverMetricsSummary(),
      sampler,
      window: { start_ms: this.windowStart, end_ms: this.windowEnd, baseline_ms: baselineMs },
      contention,
      energy,
      throttle,
    };
  }

  /** The GPUs over the measured window, from what was sampled: memory, utilization, power, its energy and throttling. */
  private gpuSummary(measuredWindow: { start: number | null; end: number | null }): {
    gpu: NonNullable<TelemetrySummary['gpu']>;
    energy: TelemetrySummary['energy'];
    throttle: TelemetrySummary['throttle'];
  } {
    const pids = this.serverPids();
    const chosen = this.options.gpuIndexes ?? null;
    const isChosen = (index: number) => chosen === null || chosen.includes(index);
    const chosenOnly = (samples: GpuSample[]) => samples.filter((sample) => isChosen(sample.index));
    const sweeps = bySweep(this.gpu.samples);
    // An exporter's page read again is the same collection, not another reading.
    const baseline = sweeps.filter((sweep) => this.inBaseline(sweep.t) && !sweep.samples[0]!.collection?.repeat);
    const cadence = this.gpu.exporterCadence;
    const exporter = cadence ? exporterWindow(sweeps, measuredWindow, cadence, this.gpu.exporterName) : null;
    const window = exporter?.figures ?? sweeps.filter((sweep) => this.inWindow(sweep.t));
    const used = (sweep: { samples: GpuSample[] }) => sumOf(chosenOnly(sweep.samples), (sample) => sample.memoryUsedMib);
    const { serverVram, others } = this.processVramInWindow(pids, isChosen);

    // Utilization and power describe the GPUs the server is on: those chosen, else those its
    // processes were seen on, else all of them.
    const serverGpus = new Set(
      this.gpu.processVram.filter((sample) => pids.has(sample.pid) && sample.gpuUuid).map((sample) => sample.gpuUuid!),
    );
    const indexes = [...new Set(this.gpu.samples.map((sample) => sample.index))].sort((a, b) => a - b);
    const first = (index: number) => this.gpu.samples.find((sample) => sample.index === index)!;
    const runGpus = new Set(
      indexes.filter((index) => (chosen !== null ? isChosen(index) : serverGpus.size === 0 || serverGpus.has(first(index).uuid ?? ''))),
    );
    const onRunGpus = (sweep: { samples: GpuSample[] }) => sweep.samples.filter((sample) => runGpus.has(sample.index));
    const names = [...runGpus].map((index) => first(index).name ?? 'unknown GPU');
    const distinctNames = [...new Set(names)];

    const windowReadings = window.flatMap(onRunGpus);
    const powerSource = this.gpu.powerSource;
    const energy = powerSource
      ? gpuWindowEnergy(exporter ? collectedReadings(exporter.inside) : this.gpu.samples, runGpus, measuredWindow, powerSource)
      : energyUnavailable(MAC_POWER_NOTE, measuredWindow);
    const gpu = {
      name:
        distinctNames.length === 1 && names.length > 1
          ? `${names.length}× ${distinctNames[0]}`
          : distinctNames.join(' + ') || 'unknown GPU',
      gpu_count: indexes.length,
      ...(chosen !== null ? { chosen_indexes: [...chosen] } : {}),
      memory_total_mib: sumOf(chosenOnly(sweeps[0]!.samples), (sample) => sample.memoryTotalMib),
      before_load_used_mib: this.options.beforeLoadUsedMib ?? null,
      baseline_used_mib: mean(defined(baseline.map(used))),
      peak_used_mib: max(defined(window.map(used))),
      server_used_mib_peak: max(serverVram),
      server_used_mib_mean: mean(serverVram),
      utilization_pct_mean: mean(defined(window.flatMap((sweep) => onRunGpus(sweep).map((sample) => sample.utilizationPct)))),
      power_w_mean: mean(defined(window.map((sweep) => sumOf(onRunGpus(sweep), (sample) => sample.powerW)))),
      samples: exporter?.inside.length ?? window.length,
      baseline_samples: baseline.length,
      other_processes_vram_mib: max(others),
      timestamps: { ...this.gpu.timestampCounts },
      per_gpu: indexes.map((index) => this.oneGpuSummary(first(index), baseline, window)),
      sampling_failure: this.gpu.unavailableReason,
      ...this.samplingNotes(window.length, exporter?.notes ?? []),
    };
    return { gpu, energy, throttle: throttleSummary(windowReadings) };
  }

  /**
   * The sampling tool's notes, what the window's GPU exporter readings are (`exporterNotes`), and a
   * plain statement where the measured window holds no GPU reading at all.
   */
  private samplingNotes(windowSweeps: number, exporterNotes: string[]): { sampling_notes?: string[] } {
    const notes = [...this.gpu.notes, ...exporterNotes];
    if (windowSweeps === 0 && this.windowStart !== null && this.windowEnd !== null) {
      const seconds = ((this.windowEnd - this.windowStart) / 1000).toFixed(2);
      const lastError = this.gpu.lastReadError ? `; the last reading failed: ${this.gpu.lastReadError}` : '';
      notes.push(
        `no GPU sample fell inside the ${seconds} s measured window (sampled every ${this.gpu.sampleIntervalMs} ms${lastError}): its utilization, power and peak memory are unknown`,
      );
    }
    return notes.length > 0 ? { sampling_notes: notes } : {};
  }

  /**
   * Memory by process on the chosen GPUs over the window: the server's, and all others' together.
   * A process on a GPU outside the choice is other GPU activity, whoever it belongs to.
   */
  private processVramInWindow(pids: Set<number>, isChosen: (index: number) => boolean): { serverVram: number[]; others: number[] } {
    const indexOfUuid = new Map(this.gpu.samples.map((sample) => [sample.uuid, sample.index]));
    const onChosenGpu = (sample: ProcessVramSample) => {
      const index = sample.gpuUuid ? indexOfUuid.get(sample.gpuUuid) : undefined;
      return index === undefined || isChosen(index);
    };
    const windowApps = bySweep(this.gpu.processVram.filter(onChosenGpu)).filter((sweep) => this.inWindow(sweep.t));
    return {
      serverVram: defined(windowApps.map((sweep) => this.serverVramOf(sweep.samples, pids))),
      others: defined(
        windowApps.map((sweep) => {
          const theirs = sweep.samples.filter((sample) => !pids.has(sample.pid) && sample.usedMib !== null);
          return theirs.length === 0 ? null : theirs.reduce((sum, sample) => sum + sample.usedMib!, 0);
        }),
      ),
    };
  }

  /** One GPU's own figures: its memory at baseline and at peak, its mean utilization over the window. */
  private oneGpuSummary(first: GpuSample, baseline: { samples: GpuSample[] }[], window: { samples: GpuSample[] }[]) {
    const of = (list: { samples: GpuSample[] }[]) =>
      list.flatMap((sweep) => sweep.samples.filter((sample) => sample.index === first.index));
    return {
      index: first.index,
      ...(this.gpu.hostOf(first.index) ? { host: this.gpu.hostOf(first.index) } : {}),
      name: first.name,
      memory_total_mib: first.memoryTotalMib,
      baseline_used_mib: mean(defined(of(baseline).map((sample) => sample.memoryUsedMib))),
      peak_used_mib: max(defined(of(window).map((sample) => sample.memoryUsedMib))),
      utilization_pct_mean: mean(defined(of(window).map((sample) => sample.utilizationPct))),
    };
  }

  private serverProcessSummary(): TelemetrySummary['server_process'] {
    if (!this.process) return null;
    const window = this.process.samples.filter((sample) => this.inWindow(sample.t));
    return { cpu_pct_mean: mean(window.map((sample) => sample.cpuPct)), rss_peak_bytes: max(window.map((sample) => sample.rssBytes)) };
  }

  /** The server's own counters over the measured window: token totals as differences, queue depths at their peak. */
  private serverMetricsSummary(): TelemetrySummary['server_metrics'] {
    if (!this.scraper || this.scraper.samples.length === 0) return null;
    const samples = this.scraper.samples;
    const before = [...samples].reverse().find((sample) => this.windowStart !== null && sample.t <= this.windowStart) ?? samples[0]!;
    const after = samples[samples.length - 1]!;
    const delta = (key: 'promptTokensTotal' | 'cachedPromptTokensTotal' | 'predictedTokensTotal') =>
      after[key] === null || before[key] === null ? null : after[key]! - before[key]!;
    const window = samples.filter((sample) => this.inWindow(sample.t));
    return {
      prompt_tokens: delta('promptTokensTotal'),
      cached_prompt_tokens: delta('cachedPromptTokensTotal'),
      predicted_tokens: delta('predictedTokensTotal'),
      requests_processing_max: max(defined(window.map((sample) => sample.requestsProcessing))),
      requests_deferred_max: max(defined(window.map((sample) => sample.requestsDeferred))),
    };
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
        {
          series: 'metrics.predicted_tokens_total',
          unit: 'tokens',
          points: pack(this.scraper.samples.map((s) => [s.t, s.predictedTokensTotal])),
        },
        {
          series: 'metrics.requests_processing',
          unit: 'requests',
          points: pack(this.scraper.samples.map((s) => [s.t, s.requestsProcessing])),
        },
      );
    }
    result.push({
      series: 'contention.other_cpu',
      unit: 'cores',
      points: pack(this.contention.samples.map((s) => [s.t, s.other_cpu_cores])),
    });
    return result.filter((entry) => entry.points.length > 0);
  }
}

function endpointServerPid(url: string | null, root?: string): number | null {
  const port = url ? localPort(url) : null;
  return port === null ? null : llamaServerOnPort(port, root);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
