import fs from 'node:fs';
import type { GpuSample, ProcessVramSample } from '../../shared/contract/telemetry';
import { Emitter } from '../core/emitter';
import { ManagedProcess } from '../core/process';
import { findExecutable } from '../core/which';
import { JsonDocumentSplitter } from './json-stream';
import { computeAppsQueryArgs, gpuQueryArgs, NVML_FAILURE, parseAmdSmiMetrics, parseComputeAppLine, parseGpuLine } from './nvidia-smi-parse';

const MAX_RESTARTS = 5;
const RESTART_DELAY_MS = 1000;

/**
 * One long-lived `nvidia-smi ... -lms N` loop (never a process per sample: each start can
 * cost the driver seconds), restarted if it dies, given up on with a reason when the
 * driver itself fails.
 */
class SmiLoop<T> {
  private child: ManagedProcess | null = null;
  private restarts = 0;
  private stopped = false;
  failure: string | null = null;

  constructor(
    private readonly binary: string,
    private readonly args: string[],
    private readonly parse: (line: string) => T | null,
    private readonly onSample: (sample: T) => void,
  ) {}

  start(): void {
    if (this.stopped || this.failure) return;
    const child = new ManagedProcess(this.binary, this.args, {
      logCapacity: 20,
      onLine: (line) => {
        if (NVML_FAILURE.test(line)) {
          this.failure = line.trim();
          void child.stop(500);
          return;
        }
        const sample = this.parse(line);
        if (sample) this.onSample(sample);
      },
    });
    this.child = child;
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

  /** CPU seconds the loop's process used so far (Linux), for the sampler's own cost. */
  cpuSeconds(): number {
    const pid = this.child?.pid;
    if (!pid) return 0;
    return readCpuSeconds(pid);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.child?.stop(1000);
  }
}

export function readCpuSeconds(pid: number): number {
  try {
    // Fields 14 and 15 (utime, stime) in clock ticks; 100 ticks per second on Linux.
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

export function nvidiaSmiPath(): string | null {
  return findExecutable('nvidia-smi');
}

/**
 * AMD GPUs through one long-lived `amd-smi metric ... --json --watch 1` (seconds are its
 * finest interval): every JSON document it prints becomes one sample per GPU. The flags
 * follow amd-smi's documented CLI; without an AMD GPU here it is tested against a stand-in.
 */
export class AmdGpuSampler {
  readonly samples: GpuSample[] = [];
  private child: ManagedProcess | null = null;
  private stopped = false;
  failure: string | null = null;

  constructor(
    private readonly binary: string,
    private readonly clock: () => number,
    private readonly onSample: (sample: GpuSample) => void,
  ) {}

  static args(): string[] {
    return ['metric', '--usage', '--mem-usage', '--power', '--temperature', '--json', '--watch', '1'];
  }

  start(): void {
    const splitter = new JsonDocumentSplitter((document) => {
      for (const sample of parseAmdSmiMetrics(document, this.clock())) {
        this.samples.push(sample);
        this.onSample(sample);
      }
    });
    this.child = new ManagedProcess(this.binary, AmdGpuSampler.args(), {
      logCapacity: 20,
      onLine: (line, stream) => {
        if (stream === 'stdout') splitter.write(`${line}\n`);
        else if (/error|not found|failed/i.test(line)) this.failure = line.trim();
      },
    });
    void this.child.exited.then(() => {
      if (!this.stopped && this.samples.length === 0) this.failure ??= `amd-smi exited: ${this.child?.logs.text(3)}`;
    });
  }

  cpuSeconds(): number {
    return this.child?.pid ? readCpuSeconds(this.child.pid) : 0;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.child?.stop(1000);
  }
}

/** GPU memory/utilization for every GPU plus VRAM per process, on the caller's clock. */
export class GpuSampler {
  readonly samples: GpuSample[] = [];
  readonly processVram: ProcessVramSample[] = [];
  readonly changes = new Emitter<GpuSample>();
  private loops: SmiLoop<unknown>[] = [];
  private amd: AmdGpuSampler | null = null;
  private startedCpu = 0;

  constructor(
    private readonly clock: () => number,
    private readonly intervalMs = 250,
    private readonly binary: string | null = nvidiaSmiPath(),
    /** Oldest samples are dropped beyond this many (the idle sampler runs for days). */
    private readonly retain = Number.POSITIVE_INFINITY,
  ) {}

  get unavailableReason(): string | null {
    if (this.amd) return this.amd.failure && this.samples.length === 0 ? `amd-smi failed: ${this.amd.failure}` : null;
    if (!this.binary) return 'neither nvidia-smi nor amd-smi found: no GPU driver on this machine';
    const failure = this.loops.find((loop) => loop.failure)?.failure;
    if (failure) return `nvidia-smi failed: ${failure}`;
    return null;
  }

  start(): void {
    if (this.loops.length > 0 || this.amd) return;
    if (!this.binary) {
      const amdSmi = findExecutable('amd-smi');
      if (!amdSmi) return;
      this.amd = new AmdGpuSampler(amdSmi, this.clock, (sample) => {
        this.samples.push(sample);
        if (this.samples.length > this.retain) this.samples.splice(0, this.samples.length - this.retain);
        this.changes.emit(sample);
      });
      this.amd.start();
      return;
    }
    this.loops = [
      new SmiLoop(this.binary, gpuQueryArgs(this.intervalMs), (line) => parseGpuLine(line, this.clock()), (sample) => {
        this.samples.push(sample);
        if (this.samples.length > this.retain) this.samples.splice(0, this.samples.length - this.retain);
        this.changes.emit(sample);
      }),
      new SmiLoop(this.binary, computeAppsQueryArgs(this.intervalMs), (line) => parseComputeAppLine(line, this.clock()), (sample) => {
        this.processVram.push(sample);
        if (this.processVram.length > this.retain) this.processVram.splice(0, this.processVram.length - this.retain);
      }),
    ] as SmiLoop<unknown>[];
    for (const loop of this.loops) loop.start();
    this.startedCpu = 0;
  }

  cpuSeconds(): number {
    return this.loops.reduce((sum, loop) => sum + loop.cpuSeconds(), 0) + (this.amd?.cpuSeconds() ?? 0) - this.startedCpu;
  }

  async stop(): Promise<void> {
    await Promise.all([...this.loops.map((loop) => loop.stop()), this.amd?.stop()]);
  }
}

