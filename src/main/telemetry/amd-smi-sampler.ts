import type { GpuSample } from '../../shared/contract/telemetry';
import { ManagedProcess } from '../core/process';
import { readAmdSmiDocument } from './amd-smi-parse';
import { SweepCounter } from './gpu-sample-clock';
import { readCpuSeconds } from './proc-stat';
import { JsonDocumentSplitter } from './json-stream';

const POLL_TIMEOUT_MS = 5000;

/**
 * AMD GPUs through one long-lived `amd-smi metric ... --json --watch 1` (seconds are its finest
 * interval). Each document, or each element of a list that watch mode keeps open, becomes one
 * sample per GPU. Some releases print only the watch banner and never a document with --json
 * (amd-smi 7.1.1, ROCm/amdsmi#168; captured in test/fixtures/captured/amd-smi): after
 * `watchSilenceMs` without one, it runs `amd-smi metric --json` once per interval instead, and
 * says so. Whatever cannot be read ("N/A") is kept as a note that reaches the run.
 */
export class AmdGpuSampler {
  readonly samples: GpuSample[] = [];
  readonly notes = new Set<string>();
  failure: string | null = null;
  private child: ManagedProcess | null = null;
  private stopped = false;
  private documentSeen = false;
  private polling: Promise<void> | null = null;
  private silenceTimer: NodeJS.Timeout | null = null;
  private wakePoll: (() => void) | null = null;
  private readonly sweeps = new SweepCounter(1000);

  constructor(
    private readonly binary: string,
    private readonly clock: () => number,
    private readonly onSample: (sample: GpuSample) => void,
    private readonly watchSilenceMs = 5000,
    private readonly pollIntervalMs = 1000,
  ) {}

  static metricArgs(): string[] {
    return ['metric', '--usage', '--mem-usage', '--power', '--temperature', '--json'];
  }

  static args(): string[] {
    return [...AmdGpuSampler.metricArgs(), '--watch', '1'];
  }

  start(): void {
    const splitter = this.splitter();
    const child = new ManagedProcess(this.binary, AmdGpuSampler.args(), {
      logCapacity: 20,
      onLine: (line, stream) => {
        if (stream === 'stdout') splitter.write(`${line}\n`);
        else if (/error|not found|failed/i.test(line)) this.failure = line.trim();
      },
    });
    this.child = child;
    void child.exited.then(() => {
      if (!this.stopped && !this.polling && this.samples.length === 0) this.failure ??= `amd-smi exited: ${child.logs.text(3)}`;
    });
    this.silenceTimer = setTimeout(() => {
      if (this.stopped || this.documentSeen) return;
      this.notes.add(
        `amd-smi metric --watch --json printed no JSON in ${this.watchSilenceMs / 1000} s (as amd-smi 7.1.1 does); read with amd-smi metric --json once every ${this.pollIntervalMs / 1000} s instead, one process start per reading`,
      );
      void child.stop(1000);
      this.polling = this.poll();
    }, this.watchSilenceMs);
    this.silenceTimer.unref();
  }

  private splitter(): JsonDocumentSplitter {
    return new JsonDocumentSplitter((document) => this.accept(document), undefined, true);
  }

  private accept(document: unknown): void {
    this.documentSeen = true;
    const t = this.clock();
    const { samples, notes } = readAmdSmiDocument(document, t);
    for (const note of notes) this.notes.add(note);
    for (const sample of samples) {
      sample.sweep = this.sweeps.assign(String(sample.index), t);
      this.samples.push(sample);
      this.onSample(sample);
    }
  }

  /** One `amd-smi metric --json` per interval, never two at once, until stopped. */
  private async poll(): Promise<void> {
    while (!this.stopped) {
      const began = this.clock();
      const lines: string[] = [];
      const child = new ManagedProcess(this.binary, AmdGpuSampler.metricArgs(), {
        logCapacity: 20,
        onLine: (line, stream) => void (stream === 'stdout' && lines.push(line)),
      });
      this.child = child;
      const timeout = setTimeout(() => void child.stop(1000), POLL_TIMEOUT_MS);
      const exit = await child.exited;
      clearTimeout(timeout);
      if (this.stopped) return;
      if (exit.code === 0) this.splitter().write(lines.join('\n'));
      else if (this.samples.length === 0) {
        this.failure = `amd-smi metric --json exited with ${exit.code ?? exit.signal}: ${child.logs.text(3)}`;
        return;
      }
      const wait = Math.max(0, this.pollIntervalMs - (this.clock() - began));
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
        this.wakePoll = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  cpuSeconds(): number {
    return this.child?.pid ? readCpuSeconds(this.child.pid) : 0;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.silenceTimer) clearTimeout(this.silenceTimer);
    this.wakePoll?.();
    await this.child?.stop(1000);
    await this.polling;
  }
}
