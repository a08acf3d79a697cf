import type { GpuSample } from '../../shared/contract/telemetry';
import { parseIoregAccelerators } from './ioreg-parse';
import { PolledCommand } from './polled-command';

/** ioreg prints a whole registry node per GPU (47 KB on an M4 Pro): once a second is enough. */
const MIN_INTERVAL_MS = 1000;

/**
 * A Mac's GPUs without sudo: `ioreg -r -d 1 -w 0 -c IOAccelerator` once per interval, each run
 * one pass over the GPUs. Utilization and the memory the GPU holds, never power (MAC_POWER_NOTE).
 */
export class IoregSampler {
  readonly samples: GpuSample[] = [];
  readonly notes = new Set<string>();
  failure: string | null = null;
  private readonly command: PolledCommand;
  private sweep = 0;

  static args(): string[] {
    return ['-r', '-d', '1', '-w', '0', '-c', 'IOAccelerator'];
  }

  constructor(binary: string, clock: () => number, intervalMs: number, onSample: (sample: GpuSample) => void) {
    this.command = new PolledCommand(
      binary,
      IoregSampler.args(),
      Math.max(MIN_INTERVAL_MS, intervalMs),
      (stdout) => {
        const { samples, notes } = parseIoregAccelerators(stdout, clock());
        for (const note of notes) this.notes.add(note);
        if (samples.length === 0) return;
        this.sweep += 1;
        for (const sample of samples) {
          sample.sweep = this.sweep;
          this.samples.push(sample);
          onSample(sample);
        }
      },
      (exit, stderr) => {
        this.failure = `ioreg exited with ${exit.code ?? exit.signal}: ${stderr}`;
        return this.samples.length > 0;
      },
    );
  }

  start(): void {
    this.command.start();
  }

  get pid(): number | undefined {
    return this.command.pid;
  }

  stop(): Promise<void> {
    return this.command.stop();
  }
}
