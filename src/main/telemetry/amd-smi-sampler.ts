import type { GpuSample } from '../../shared/contract/telemetry';
import { ManagedProcess } from '../core/process';
import { readAmdSmiDocument } from './amd-smi-parse';
import { SweepCounter } from './gpu-sample-clock';
import { readCpuSeconds } from './proc-stat';
import { JsonDocumentSplitter } from './json-stream';
import { PolledCommand } from './polled-command';

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
  private polling: PolledCommand | null = null;
  private silenceTimer: NodeJS.Timeout | null = null;
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
      this.polling = new PolledCommand(
        this.binary,
        AmdGpuSampler.metricArgs(),
        this.pollIntervalMs,
        (stdout) => this.splitter().write(stdout),
        (exit, stderr) => {
          if (this.samples.length > 0) return true;
          this.failure = `amd-smi metric --json exited with ${exit.code ?? exit.signal}: ${stderr}`;
          return false;
        },
      );
      this.polling.start();
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

  cpuSeconds(): number {
    return this.child?.pid ? readCpuSeconds(this.child.pid) : 0;
  }

  get pid(): number | undefined {
    return this.polling ? this.polling.pid : this.child?.pid;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.silenceTimer) clearTimeout(this.silenceTimer);
    await Promise.all([this.child?.stop(1000), this.polling?.stop()]);
  }
}
