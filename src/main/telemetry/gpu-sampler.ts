import type { EnergySummary, GpuSample, ProcessVramSample } from '../../shared/contract/telemetry';
import { Emitter } from '../core/emitter';
import { ManagedProcess, runToCompletion } from '../core/process';
import { findExecutable } from '../core/which';
import { GpuExporterSampler, type ExporterCadence } from './gpu-exporter-sampler';
import { AmdGpuSampler } from './amd-smi-sampler';
import { IoregSampler } from './ioreg-sampler';
import { SmiClock, SweepCounter } from './gpu-sample-clock';
import { readCpuSeconds } from './proc-stat';
import {
  computeAppsQueryArgs,
  gpuQueryArgs,
  gpuQueryOnceArgs,
  INVALID_QUERY_FIELD,
  lineTimestamp,
  NVML_FAILURE,
  parseComputeAppLine,
  parseGpuLine,
  usedMemoryOnceArgs,
} from './nvidia-smi-parse';

const MAX_RESTARTS = 5;
/** A one-off reading that takes longer than this is given up: the window's edge has passed. */
const ON_DEMAND_TIMEOUT_MS = 5000;
const RESTART_DELAY_MS = 1000;

/**
 * One long-lived `nvidia-smi ... -lms N` loop (never a process per sample: each start can
 * cost the driver seconds), restarted if it dies, given up on with a reason when the
 * driver itself fails.
 */
class SmiLoop<T> {
  private child: ManagedProcess | null = null;
  private restarts = 0;
  private cpuBefore = 0;
  private stopped = false;
  failure: string | null = null;

  constructor(
    private readonly binary: string,
    private readonly args: string[],
    private readonly parse: (line: string) => T | null,
    private readonly onSample: (sample: T) => void,
    /** Called once when the query itself is refused, which no restart fixes. */
    private readonly onRefused?: (line: string) => void,
  ) {}

  /** Starts the loop's process, or takes over `early`, the same loop begun before this sampler existed. */
  start(early: EarlyLoopProcess | null = null): void {
    if (this.stopped || this.failure) return;
    const onLine = (line: string) => {
      if (NVML_FAILURE.test(line) || INVALID_QUERY_FIELD.test(line)) {
        this.failure = line.trim();
        void child.stop(500);
        if (INVALID_QUERY_FIELD.test(line)) this.onRefused?.(line.trim());
        return;
      }
      const sample = this.parse(line);
      if (sample) this.onSample(sample);
    };
    const child = early?.child ?? new ManagedProcess(this.binary, this.args, { logCapacity: 20, onLine });
    this.child = child;
    // A process taken over used CPU before its sampler began: the sampler's own cost counts from here.
    this.cpuBefore = early && child.pid ? readCpuSeconds(child.pid) : 0;
    early?.handOver(onLine);
    void child.exited.then(() => {
      if (this.stopped || this.failure) return;
      if (this.restarts >= MAX_RESTARTS) {
        this.failure = `nvidia-smi kept exiting (${MAX_RESTARTS} restarts): ${child.logs.text(3)}`;
        return;
      }
      this.restarts += 1;
      setTimeout(() => this.start(), RESTART_DELAY_MS).unref();
    });
  }

  get pid(): number | undefined {
    return this.child?.hasExited ? undefined : this.child?.pid;
  }

  /** CPU seconds the loop's process used so far (Linux), for the sampler's own cost. */
  cpuSeconds(): number {
    const pid = this.child?.pid;
    if (!pid) return 0;
    return readCpuSeconds(pid) - this.cpuBefore;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.child?.stop(1000);
  }
}

/**
 * An nvidia-smi loop's process begun before the sampler that reads it: the readings it prints
 * meanwhile are not the run's and are dropped; a driver failure or a refused query is kept for
 * the loop that takes it over.
 */
class EarlyLoopProcess {
  readonly child: ManagedProcess;
  private handler: ((line: string) => void) | null = null;
  private readonly refusals: string[] = [];

  constructor(binary: string, args: string[]) {
    this.child = new ManagedProcess(binary, args, {
      logCapacity: 20,
      onLine: (line) => {
        if (this.handler) this.handler(line);
        else if (NVML_FAILURE.test(line) || INVALID_QUERY_FIELD.test(line)) this.refusals.push(line);
      },
    });
  }

  handOver(handler: (line: string) => void): void {
    this.handler = handler;
    for (const line of this.refusals.splice(0)) handler(line);
  }
}

/**
 * nvidia-smi's two loops begun while a run's server loads, for the run's GpuSampler to take
 * over: where the driver is not kept loaded (no persistence mode) the tool takes a second or more
 * to print its first reading, and the idle baseline after the load would wait for it. Those not
 * taken are stopped.
 */
export class EarlyGpuLoops {
  private readonly waiting = new Map<string, EarlyLoopProcess>();

  private constructor(private readonly binary: string) {}

  /** The loops a sampler at `intervalMs` starts, begun now; null without nvidia-smi (other GPU tools are started by their sampler). */
  static begin(intervalMs: number, binary = nvidiaSmiPath()): EarlyGpuLoops | null {
    if (!binary) return null;
    const loops = new EarlyGpuLoops(binary);
    for (const args of [gpuQueryArgs(intervalMs), computeAppsQueryArgs(intervalMs)])
      loops.waiting.set(args.join('\0'), new EarlyLoopProcess(binary, args));
    return loops;
  }

  /** The loop begun for this binary and these arguments, once; null where none was. */
  take(binary: string, args: string[]): EarlyLoopProcess | null {
    if (binary !== this.binary) return null;
    const key = args.join('\0');
    const loop = this.waiting.get(key) ?? null;
    this.waiting.delete(key);
    return loop;
  }

  async stop(): Promise<void> {
    const left = [...this.waiting.values()];
    this.waiting.clear();
    await Promise.all(left.map((loop) => loop.child.stop(1000)));
  }
}

/** A scrape costs the exporter a page of text; once a second is already faster than dcgm-exporter's own default. */
const exporterIntervalMs = (intervalMs: number) => Math.max(1000, intervalMs);

export function nvidiaSmiPath(): string | null {
  return findExecutable('nvidia-smi');
}

/** GPU memory/utilization for every GPU plus VRAM per process, on the caller's clock. */
export class GpuSampler {
  readonly samples: GpuSample[] = [];
  readonly processVram: ProcessVramSample[] = [];
  readonly changes = new Emitter<GpuSample>();
  private loops: SmiLoop<unknown>[] = [];
  private amd: AmdGpuSampler | null = null;
  private ioreg: IoregSampler | null = null;
  private exporter: GpuExporterSampler | null = null;
  private smiClock: SmiClock | null = null;
  private stopped = false;
  private clockFieldsRefused = false;

  constructor(
    private readonly clock: () => number,
    private readonly intervalMs = 250,
    private readonly binary: string | null = nvidiaSmiPath(),
    /** Oldest samples are dropped beyond this many (the idle sampler runs for days). */
    private readonly retain = Number.POSITIVE_INFINITY,
    /** A GPU exporter's Prometheus page (the server's GPUs are on another machine): read instead of this machine's GPUs. */
    private readonly exporterUrl: string | null = null,
    /** nvidia-smi loops begun before this sampler, taken over by start() where they match. */
    private readonly early: EarlyGpuLoops | null = null,
  ) {}

  /** Where the power readings came from, as energy figures name their source; null where the source has none (ioreg). */
  get powerSource(): NonNullable<EnergySummary['source']> | null {
    if (this.exporter)
      return this.exporter.kind === 'amd-device-metrics-exporter' ? 'amd-device-metrics-exporter power' : 'dcgm-exporter power';
    if (this.ioreg) return null;
    return this.amd ? 'amd-smi socket_power' : 'nvidia-smi power.draw';
  }

  /** Why readings lack figures, or how they were taken, as the sampling tool made necessary. */
  get notes(): string[] {
    return [...(this.amd?.notes ?? []), ...(this.ioreg?.notes ?? [])];
  }

  /** How often the running source is read: an exporter no more than once a second. */
  get sampleIntervalMs(): number {
    return this.exporterUrl ? exporterIntervalMs(this.intervalMs) : this.intervalMs;
  }

  /** Why the latest reading of an exporter failed; null while the last one succeeded. */
  get lastReadError(): string | null {
    return this.exporter?.lastError ?? null;
  }

  /** How often a GPU exporter was seen to collect; null for the other sources, which are read, not served a collection. */
  get exporterCadence(): ExporterCadence | null {
    return this.exporter?.cadence ?? null;
  }

  /** The GPU exporter by name, as notes name it. */
  get exporterName(): string {
    return this.exporter?.kind ?? 'the GPU exporter';
  }

  /** The machine each GPU index is on, where a GPU exporter labels it. */
  hostOf(index: number): string | null {
    return this.exporter?.hosts.get(index) ?? null;
  }

  /** No GPU tool on this machine and no exporter to read: nothing an idle baseline could sample. Known once started. */
  get hasNoSource(): boolean {
    return !this.exporterUrl && !this.binary && !this.amd && !this.ioreg;
  }

  get unavailableReason(): string | null {
    if (this.exporter) return this.exporter.failure;
    if (this.amd) return this.amd.failure && this.samples.length === 0 ? `amd-smi failed: ${this.amd.failure}` : null;
    if (this.ioreg) return this.ioreg.failure && this.samples.length === 0 ? `ioreg failed: ${this.ioreg.failure}` : null;
    if (!this.binary) return 'neither nvidia-smi, amd-smi nor ioreg found: no GPU driver on this machine';
    const failure = this.loops.find((loop) => loop.failure)?.failure;
    if (failure) return `nvidia-smi failed: ${failure}`;
    return null;
  }

  start(): void {
    if (this.loops.length > 0 || this.amd || this.ioreg || this.exporter) return;
    if (this.exporterUrl) {
      this.exporter = new GpuExporterSampler(this.exporterUrl, this.clock, exporterIntervalMs(this.intervalMs), (sample) =>
        this.keep(sample),
      );
      this.exporter.start();
      return;
    }
    if (!this.binary) {
      const amdSmi = findExecutable('amd-smi');
      const ioreg = amdSmi ? null : findExecutable('ioreg');
      if (amdSmi) {
        this.amd = new AmdGpuSampler(amdSmi, this.clock, (sample) => this.keep(sample));
        this.amd.start();
      } else if (ioreg) {
        this.ioreg = new IoregSampler(ioreg, this.clock, this.intervalMs, (sample) => this.keep(sample));
        this.ioreg.start();
      }
      return;
    }
    const smiClock = new SmiClock(this.clock);
    this.smiClock = smiClock;
    const gpuSweeps = new SweepCounter(this.intervalMs);
    const appSweeps = new SweepCounter(this.intervalMs);
    const parseGpu = (line: string) => {
      const sample = parseGpuLine(line, 0);
      if (!sample) return null;
      sample.t = smiClock.place(lineTimestamp(line));
      sample.sweep = gpuSweeps.assign(String(sample.index), sample.t);
      return sample;
    };
    const parseApp = (line: string) => {
      const sample = parseComputeAppLine(line, 0);
      if (!sample) return null;
      sample.t = smiClock.place(lineTimestamp(line));
      sample.sweep = appSweeps.assign(`${sample.gpuUuid ?? ''}:${sample.pid}`, sample.t);
      return sample;
    };
    // A driver that refuses the clock fields still gets sampled without them (no memory clock, no throttle reasons).
    const withoutClocks = () => {
      this.clockFieldsRefused = true;
      if (this.stopped) return;
      const loop = new SmiLoop(this.binary!, gpuQueryArgs(this.intervalMs, false), parseGpu, (sample: GpuSample) => this.keep(sample));
      this.loops[0] = loop as SmiLoop<unknown>;
      loop.start();
    };
    const gpuArgs = gpuQueryArgs(this.intervalMs);
    const appArgs = computeAppsQueryArgs(this.intervalMs);
    this.loops = [
      new SmiLoop(this.binary, gpuArgs, parseGpu, (sample: GpuSample) => this.keep(sample), withoutClocks),
      new SmiLoop(this.binary, appArgs, parseApp, (sample) => {
        this.processVram.push(sample);
        if (this.processVram.length > this.retain) this.processVram.splice(0, this.processVram.length - this.retain);
      }),
    ] as SmiLoop<unknown>[];
    this.loops[0]!.start(this.early?.take(this.binary, gpuArgs) ?? null);
    this.loops[1]!.start(this.early?.take(this.binary, appArgs) ?? null);
  }

  /**
   * One reading of every GPU now, stamped `t`, outside the sampling loop: what a measured window's
   * edge needs when the loop's own interval could leave a short window without a sample. Read
   * from the exporter or nvidia-smi; amd-smi and ioreg are not read on demand (a start costs them
   * seconds), so their loops alone sample the window.
   */
  async readNow(t: number): Promise<void> {
    if (this.stopped) return;
    if (this.exporter) return this.exporter.scrape(t);
    if (this.loops.length === 0 || !this.binary) return;
    const run = await runToCompletion(this.binary, gpuQueryOnceArgs(!this.clockFieldsRefused), { timeoutMs: ON_DEMAND_TIMEOUT_MS }).catch(
      () => null,
    );
    if (!run || run.code !== 0) return;
    for (const line of run.output.split('\n')) {
      // Without a sweep number, the reading's GPUs are grouped by their shared stamp.
      const sample = parseGpuLine(line, t);
      if (sample) this.keep(sample);
    }
  }

  private keep(sample: GpuSample): void {
    this.samples.push(sample);
    if (this.samples.length > this.retain) this.samples.splice(0, this.samples.length - this.retain);
    this.changes.emit(sample);
  }

  /** How many samples were placed by nvidia-smi's timestamp and how many by arrival. */
  get timestampCounts(): { device: number; arrival: number } {
    return this.smiClock?.counts ?? { device: 0, arrival: this.samples.length };
  }

  /** The sampler's own helper processes, so they are not counted as competition. */
  pids(): number[] {
    return [...this.loops.map((loop) => loop.pid), this.amd?.pid, this.ioreg?.pid].filter((pid): pid is number => pid !== undefined);
  }

  cpuSeconds(): number {
    return this.loops.reduce((sum, loop) => sum + loop.cpuSeconds(), 0) + (this.amd?.cpuSeconds() ?? 0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.loops.map((loop) => loop.stop()), this.amd?.stop(), this.ioreg?.stop(), this.exporter?.stop()]);
  }
}

/**
 * Used memory per GPU index, read once (the moment before a server is spawned); a GPU whose
 * reading is not a number is listed with null. Null without nvidia-smi or when it fails or
 * takes too long.
 */
export async function readGpuMemoryOnce(
  binary: string | null = nvidiaSmiPath(),
  timeoutMs = 5000,
): Promise<ReadonlyMap<number, number | null> | null> {
  if (!binary) return null;
  const run = await runToCompletion(binary, usedMemoryOnceArgs(), { timeoutMs }).catch(() => null);
  if (!run || run.code !== 0) return null;
  const used = new Map<number, number | null>();
  for (const line of run.output.split('\n')) {
    const [index, mib] = line.split(',').map((field) => field.trim());
    if (!index || !/^\d+$/.test(index)) continue;
    used.set(Number(index), mib && /^\d+(\.\d+)?$/.test(mib) ? Number(mib) : null);
  }
  return used.size > 0 ? used : null;
}

/** The used memory of the chosen GPUs (every GPU for null), summed; null when none of them had a reading. */
export function usedMibOf(used: ReadonlyMap<number, number | null> | null, indexes: readonly number[] | null): number | null {
  if (!used) return null;
  const readings = [...used].filter(([index, mib]) => mib !== null && (indexes === null || indexes.includes(index)));
  return readings.length === 0 ? null : readings.reduce((sum, [, mib]) => sum + mib!, 0);
}
