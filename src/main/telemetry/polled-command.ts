import { ManagedProcess, type ProcessExit } from '../core/process';
import { PeriodicScrape } from './prometheus-text';

/**
 * Runs a short command once per interval, never two at once (the periodic loop the
 * Prometheus scrapers use), handing each run's stdout to `onOutput`, until stopped. For
 * tools with no watch mode that works (ioreg, a broken amd-smi).
 */
export class PolledCommand {
  private readonly loop: PeriodicScrape;
  private child: ManagedProcess | null = null;
  private stopped = false;
  private gaveUp = false;

  constructor(
    private readonly binary: string,
    private readonly args: readonly string[],
    intervalMs: number,
    private readonly onOutput: (stdout: string) => void,
    /** Called for a run that failed; returning false ends the polling. */
    private readonly onFailure: (exit: ProcessExit, stderr: string) => boolean,
    private readonly timeoutMs = 5000,
  ) {
    this.loop = new PeriodicScrape(() => this.runOnce(), intervalMs);
  }

  start(): void {
    this.loop.start();
  }

  private async runOnce(): Promise<void> {
    if (this.stopped || this.gaveUp) return;
    const lines: string[] = [];
    const child = new ManagedProcess(this.binary, [...this.args], {
      logCapacity: 20,
      onLine: (line, stream) => void (stream === 'stdout' && lines.push(line)),
    });
    this.child = child;
    const timeout = setTimeout(() => void child.stop(1000), this.timeoutMs);
    const exit = await child.exited;
    clearTimeout(timeout);
    if (this.stopped) return;
    if (exit.code === 0) this.onOutput(lines.join('\n'));
    else if (!this.onFailure(exit, child.logs.text(3))) this.gaveUp = true;
  }

  /** The run in flight, if any, so that it is not counted as competition. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.child?.stop(1000);
    await this.loop.stop();
  }
}
