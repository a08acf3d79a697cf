import { ManagedProcess, type ProcessExit } from '../core/process';

/**
 * Runs a short command once per interval, never two at once, handing each run's stdout to
 * `onOutput`, until stopped. For tools with no watch mode that works (ioreg, a broken amd-smi).
 */
export class PolledCommand {
  private child: ManagedProcess | null = null;
  private stopped = false;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;

  constructor(
    private readonly binary: string,
    private readonly args: readonly string[],
    private readonly intervalMs: number,
    private readonly onOutput: (stdout: string) => void,
    /** Called for a run that failed; returning false stops the polling. */
    private readonly onFailure: (exit: ProcessExit, stderr: string) => boolean,
    private readonly timeoutMs = 5000,
  ) {}

  start(): void {
    this.loop ??= this.run();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const began = performance.now();
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
      else if (!this.onFailure(exit, child.logs.text(3))) return;
      const wait = Math.max(0, this.intervalMs - (performance.now() - began));
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /** The run in flight, if any, so that it is not counted as competition. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.child?.stop(1000);
    await this.loop;
  }
}
