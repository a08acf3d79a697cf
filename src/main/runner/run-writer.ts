import type { RunStore } from '../store/run-store';
import type { StoredRequest } from '../store/run-rows';

/**
 * Buffers finished requests and writes them in batches (one transaction each), so a crash
 * loses at most the last batch and the hot path never waits on the disk per request.
 */
export class RunWriter {
  private buffer: StoredRequest[] = [];
  private timer: NodeJS.Timeout | null = null;
  written = 0;
  /** The first write failure; the run is ended with it rather than losing requests silently. */
  failure: Error | null = null;

  constructor(
    private readonly store: RunStore,
    private readonly runId: string,
    private readonly options: { private: boolean; batchSize?: number; flushMs?: number },
  ) {}

  add(request: StoredRequest): void {
    this.buffer.push(request);
    if (this.buffer.length >= (this.options.batchSize ?? 64)) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.options.flushMs ?? 250);
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.buffer.length === 0 || this.failure) return;
    const batch = this.buffer;
    this.buffer = [];
    try {
      this.store.addRequests(this.runId, batch, { private: this.options.private });
      this.written += batch.length;
    } catch (error) {
      this.failure = error as Error;
      // Keep the batch: a later flush (after space is freed) must not skip it.
      this.buffer = [...batch, ...this.buffer];
    }
  }
}
