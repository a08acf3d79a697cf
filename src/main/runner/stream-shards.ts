import fs from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { ShardLoad } from '../../shared/contract/runs';
import {
  clockOrigin,
  turnBatcher,
  type FromShard,
  type ShardInit,
  type ShardRequest,
  type ToShard,
  type TurnBatcher,
} from './shard-protocol';
import type { StreamedCompletion } from '../client/stream-client';

/**
 * The shard's entry as built (out/cli: beside the bundle, one folder up from its chunks), or as
 * TypeScript in a source checkout, which the worker loads through tsx. The desktop app runs
 * `inferlab serve`, so the CLI's build is the only one that sends requests.
 */
function shardEntry(): { url: URL; typescript: boolean } {
  const here = import.meta.url;
  if (here.endsWith('.ts')) return { url: new URL('stream-shard-worker.ts', here), typescript: true };
  for (const name of ['stream-shard-worker.mjs', '../stream-shard-worker.mjs']) {
    const url = new URL(name, here);
    if (url.protocol === 'file:' && fs.existsSync(fileURLToPath(url))) return { url, typescript: false };
  }
  throw new Error(`the stream shard's code is missing beside ${fileURLToPath(here)}: rebuild the app (npm run build)`);
}

function startWorker(init: ShardInit): Worker {
  const entry = shardEntry();
  if (!entry.typescript) return new Worker(entry.url, { workerData: init });
  const tsx = new URL('dist/esm/api/index.mjs', pathToFileURL(createRequire(import.meta.url).resolve('tsx/package.json'))).href;
  const bootstrap = `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry.url.href)}); })`;
  return new Worker(bootstrap, { eval: true, workerData: init });
}

interface Shard {
  worker: Worker;
  /** Requests handed over in this turn of the event loop, posted together at its end. */
  outbox: TurnBatcher<ShardRequest>;
  /** Requests handed to this shard and not yet answered. */
  waiting: Map<number, (completion: StreamedCompletion | null) => void>;
  report: ((load: ShardLoad | null) => void) | null;
  /** Why the shard stopped, once it has: it then takes no requests. */
  lost: string | null;
  /** Resolved when the shard has loaded its code (or was lost first). */
  started: () => void;
}

/**
 * A run's requests spread over worker threads (stream shards), each with its own connections
 * and event loop. Requests go to the shard with the fewest waiting; every completion comes back
 * with its times on this thread's clock, to be recorded and stored here.
 */
export class StreamShards {
  private readonly shards: Shard[];
  private nextId = 0;
  private closing = false;
  private readonly origin = clockOrigin();
  private readonly startedAll: Promise<unknown>;

  /** `onLost`: a shard failed or exited; its in-flight requests came back not sent, and the run should stop. */
  constructor(
    count: number,
    target: Omit<ShardInit, 'shard' | 'runOrigin'>,
    private readonly onLost: (reason: string) => void,
  ) {
    const started: Promise<void>[] = [];
    this.shards = Array.from({ length: count }, (_, index) => {
      const worker = startWorker({ ...target, shard: index, sockets: Math.ceil(target.sockets / count) + 4, runOrigin: this.origin });
      let markStarted = () => {};
      started.push(new Promise<void>((resolve) => (markStarted = resolve)));
      const outbox = turnBatcher<ShardRequest>((requests) => this.post(shard, { kind: 'send', requests }));
      const shard: Shard = { worker, outbox, waiting: new Map(), report: null, lost: null, started: markStarted };
      worker.on('message', (message: FromShard) => this.receive(shard, message));
      worker.on('error', (error) => this.lose(shard, `stream shard ${index} failed: ${error.message}`));
      worker.on('exit', (code) => this.lose(shard, `stream shard ${index} exited (code ${code})`));
      return shard;
    });
    this.startedAll = Promise.all(started);
  }

  /** Resolves once every shard can send: the load starts after, so no request waits for a thread to load its code. */
  async ready(): Promise<void> {
    await this.startedAll;
  }

  /** Streams one request from a shard, sent at `scheduledAt` (this thread's clock) or at once; null: the run halted before its time. */
  stream(request: { path: string; body: Record<string, unknown> }, scheduledAt: number | null): Promise<StreamedCompletion | null> {
    let shard: Shard | null = null;
    for (const candidate of this.shards)
      if (!candidate.lost && (shard === null || candidate.waiting.size < shard.waiting.size)) shard = candidate;
    if (!shard) return Promise.resolve(null);
    const id = this.nextId++;
    return new Promise((resolve) => {
      shard.waiting.set(id, resolve);
      shard.outbox.add({ id, path: request.path, body: request.body, dueAt: scheduledAt === null ? null : scheduledAt + this.origin });
    });
  }

  markWindowStart(): void {
    this.broadcast({ kind: 'window' });
  }

  halt(): void {
    this.broadcast({ kind: 'halt' });
  }

  cancel(): void {
    this.broadcast({ kind: 'cancel' });
  }

  /** Each shard's figures, then the threads end. Called after the load, which has awaited every request a shard was given. */
  async close(): Promise<ShardLoad[]> {
    const reports = await Promise.all(
      this.shards.map(
        (shard) =>
          new Promise<ShardLoad | null>((resolve) => {
            if (shard.lost) return resolve(null);
            shard.report = resolve;
            this.post(shard, { kind: 'report' });
          }),
      ),
    );
    this.closing = true;
    await Promise.all(this.shards.map((shard) => shard.worker.terminate()));
    return reports.filter((report): report is ShardLoad => report !== null);
  }

  private post(shard: Shard, message: ToShard): void {
    if (!shard.lost) shard.worker.postMessage(message);
  }

  /** To every shard, after the requests it has been handed: a halt or a cancel must reach them too. */
  private broadcast(message: ToShard): void {
    for (const shard of this.shards) {
      shard.outbox.flush();
      this.post(shard, message);
    }
  }

  private receive(shard: Shard, message: FromShard): void {
    if (message.kind === 'ready') return shard.started();
    if (message.kind === 'report') {
      shard.report?.(message.load);
      shard.report = null;
      return;
    }
    for (const { id, completion } of message.results) {
      const resolve = shard.waiting.get(id);
      shard.waiting.delete(id);
      resolve?.(completion);
    }
  }

  /**
   * A shard that failed or exited takes no more requests. What it held cannot be known to have
   * been measured, so those come back not sent, and the run is told why.
   */
  private lose(shard: Shard, reason: string): void {
    if (shard.lost || this.closing) return;
    shard.lost = reason;
    const unanswered = shard.waiting.size;
    for (const resolve of shard.waiting.values()) resolve(null);
    shard.waiting.clear();
    shard.report?.(null);
    shard.report = null;
    shard.started();
    this.onLost(`${reason}; its ${unanswered} unanswered requests were not recorded`);
  }
}
