import type { Worker } from 'node:worker_threads';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { startModuleWorker } from '../core/module-worker';
import type { WorkloadDef } from './workload-types';

/**
 * Workload text comes from anywhere (a paste in the editor, a file a run names), and the YAML
 * parser and the schema checks cost some texts far more than their size: `[` × 4 million ran
 * for minutes and then ended the process at the heap limit. So text is parsed on a parser
 * thread with a heap limit and a deadline; past either the thread is terminated and the text
 * refused, while the service goes on answering.
 */
export interface WorkloadParseLimits {
  deadlineMs: number;
  heapMb: number;
}

const MIB = 1024 * 1024;

/**
 * 10 s and 4 s more per MiB; 128 MiB of heap per MiB, at least 512 and at most 4096 (about the
 * main thread's own default limit). A valid 8 MiB workload of 75,000 short items needs 13–16 s
 * and between 512 and 768 MiB on a busy two-core machine, so the editor's largest text gets 42 s
 * and 1024 MiB; a file of the CLI's largest, 64 MiB, gets 266 s and 4096 MiB.
 */
export function workloadParseLimits(bytes: number): WorkloadParseLimits {
  const mib = bytes / MIB;
  return {
    deadlineMs: 10_000 + Math.round(4_000 * mib),
    heapMb: Math.min(4096, Math.max(512, Math.ceil(128 * mib))),
  };
}

/** At most this many parser threads at once; more callers wait their turn, so memory stays bounded. */
const MAX_THREADS = 2;
/** A thread's start (loading the parser, compiling the schema) is bounded apart from the text's deadline. */
const STARTUP_LIMIT_MS = 60_000;
/** A thread kept after a parse serves the next one without starting again, until idle this long. */
const IDLE_MS = 60_000;
/** A thread that parsed more than this has a grown heap; it is not kept. */
const KEEP_BELOW_BYTES = 1024 * 1024;

/**
 * What goes to a parser thread: text as UTF-8 bytes, handed over rather than copied (cloning
 * 8 MiB of text took 140–240 ms of the service's thread), `fromFile` when they are a file's
 * bytes still to be checked; text that is not well-formed UTF-16 (a lone surrogate would not
 * survive encoding) goes as it is.
 */
export type ParseRequest = { id: number; file: string } & (
  { text: string; bytes?: undefined } | { bytes: Uint8Array; fromFile: boolean; text?: undefined }
);
type ParseInput = { text: string } | { bytes: Uint8Array; fromFile: boolean };

export type ParseReply =
  | { id: number; ok: true; def: WorkloadDef }
  | {
      id: number;
      ok: false;
      error: { app: true; code: ErrorCode; message: string; details?: unknown } | { app: false; name: string; message: string };
    };

type Outcome = { ready: true } | { reply: ParseReply } | { stopped: 'deadline' | 'memory' | 'failed'; reason: string };

/** One parser thread: started under its heap limit, answering one request at a time, each within its deadline. */
class ParserThread {
  private readonly worker: Worker;
  private ready = false;
  private waiter: ((outcome: Outcome) => void) | null = null;
  /** Why the thread is gone, once it is. */
  private gone: Outcome | null = null;
  private idleTimer: NodeJS.Timeout | null = null;

  constructor(readonly heapMb: number) {
    this.worker = startModuleWorker('workload-parse-worker', import.meta.url, {
      resourceLimits: { maxOldGenerationSizeMb: heapMb, stackSizeMb: 4 },
    });
    this.worker.on('message', (message: 'ready' | ParseReply) => {
      if (message === 'ready') this.ready = true;
      this.deliver(message === 'ready' ? { ready: true } : { reply: message });
    });
    this.worker.on('error', (error: Error & { code?: string }) =>
      this.deliver(
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? { stopped: 'memory', reason: error.message }
          : { stopped: 'failed', reason: `the parser thread failed: ${error.message}` },
      ),
    );
    this.worker.on('exit', (code) => this.deliver({ stopped: 'failed', reason: `the parser thread stopped (exit code ${code})` }));
    // An idle thread must not keep the CLI alive. After the listeners: a 'message' listener refs the thread again.
    this.worker.unref();
  }

  get alive(): boolean {
    return this.gone === null;
  }

  private deliver(outcome: Outcome): void {
    if ('stopped' in outcome) this.gone ??= outcome;
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.(outcome);
  }

  /** The next event, or `late` once `limitMs` passes, which ends the thread. */
  private next(limitMs: number, late: Outcome): Promise<Outcome> {
    if (this.gone) return Promise.resolve(this.gone);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiter = null;
        this.close(late);
        resolve(late);
      }, limitMs);
      this.waiter = (outcome) => {
        clearTimeout(timer);
        resolve(outcome);
      };
    });
  }

  async parse(request: ParseRequest, transfer: ArrayBuffer[], deadlineMs: number): Promise<Outcome> {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    // While it parses, the thread keeps the process alive: a CLI awaiting nothing else must not exit mid-parse.
    this.worker.ref();
    try {
      if (!this.ready) {
        const started = await this.next(STARTUP_LIMIT_MS, {
          stopped: 'failed',
          reason: `the parser thread did not start within ${STARTUP_LIMIT_MS / 1000} s`,
        });
        if (!('ready' in started)) return started;
      }
      this.worker.postMessage(request, transfer);
      return await this.next(deadlineMs, { stopped: 'deadline', reason: 'deadline' });
    } finally {
      if (this.alive) this.worker.unref();
    }
  }

  /** Ends the thread once it has been idle for IDLE_MS. */
  idle(onEnd: () => void): void {
    this.idleTimer = setTimeout(() => {
      this.close({ stopped: 'failed', reason: 'idle' });
      onEnd();
    }, IDLE_MS);
    this.idleTimer.unref();
  }

  close(why: Outcome = { stopped: 'failed', reason: 'closed' }): void {
    this.gone ??= why;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    void this.worker.terminate();
  }
}

/** At most MAX_THREADS parses at once, each on a thread of its own; a thread that ended well is kept a while for the next. */
class ParserPool {
  private running = 0;
  private readonly queue: (() => void)[] = [];
  private readonly kept: ParserThread[] = [];
  private nextId = 1;

  async parse(input: ParseInput, file: string, limits: WorkloadParseLimits): Promise<Outcome> {
    await this.acquire();
    try {
      const index = this.kept.findIndex((thread) => thread.alive && thread.heapMb === limits.heapMb);
      const thread = index >= 0 ? this.kept.splice(index, 1)[0]! : new ParserThread(limits.heapMb);
      const size = 'text' in input ? input.text.length : input.bytes.byteLength;
      const transfer = 'bytes' in input ? [input.bytes.buffer as ArrayBuffer] : [];
      const outcome = await thread.parse({ id: this.nextId++, file, ...input }, transfer, limits.deadlineMs);
      if (thread.alive && size <= KEEP_BELOW_BYTES && this.kept.length < MAX_THREADS) this.keep(thread);
      else thread.close();
      return outcome;
    } finally {
      this.release();
    }
  }

  /** A thread started ahead of a parse that is sure to come, unless one with that heap limit is already kept. */
  prestart(heapMb: number): void {
    if (this.kept.length >= MAX_THREADS || this.kept.some((thread) => thread.alive && thread.heapMb === heapMb)) return;
    this.keep(new ParserThread(heapMb));
  }

  private keep(thread: ParserThread): void {
    this.kept.push(thread);
    thread.idle(() => {
      const index = this.kept.indexOf(thread);
      if (index >= 0) this.kept.splice(index, 1);
    });
  }

  private async acquire(): Promise<void> {
    if (this.running < MAX_THREADS) {
      this.running++;
      return;
    }
    // The slot is handed over by release(), so no newcomer can take it in between.
    await new Promise<void>((resolve) => this.queue.push(resolve));
  }

  private release(): void {
    const next = this.queue.shift();
    if (next) next();
    else this.running--;
  }
}

const pool = new ParserPool();

/**
 * Starts a parser thread for text of ordinary size now, so that its start (a fresh module graph and
 * the schema compiled, about a quarter of a second) runs beside the caller's own start rather than
 * before its first parse. Kept as any idle thread is, and ended when idle.
 */
export function prestartWorkloadParser(): void {
  pool.prestart(workloadParseLimits(0).heapMb);
}

/** The refusal of a text that costs the parser more than its limits, in the shape of a workload problem so every face shows it. */
function tooComplex(file: string, label: string, limits: WorkloadParseLimits, what: string): AppError {
  const message =
    `workload text too complex to parse within ${Number((limits.deadlineMs / 1000).toFixed(1))} s and ${limits.heapMb} MiB (${what}): ${label}. ` +
    'Look for unclosed brackets or deep nesting, or split it into smaller workload files.';
  return new AppError(ErrorCode.InvalidInput, message, { problems: [{ file, line: null, column: null, field: '', message }] });
}

function definitionOf(outcome: Outcome, file: string, label: string, limits: WorkloadParseLimits): WorkloadDef {
  if ('stopped' in outcome) {
    if (outcome.stopped === 'deadline') throw tooComplex(file, label, limits, 'it ran out of time');
    if (outcome.stopped === 'memory') throw tooComplex(file, label, limits, 'it ran out of memory');
    throw new AppError(ErrorCode.Internal, `Could not parse the workload ${label}: ${outcome.reason}`);
  }
  if (!('reply' in outcome))
    throw new AppError(ErrorCode.Internal, `Could not parse the workload ${label}: the parser thread sent no answer`);
  const reply = outcome.reply;
  if (reply.ok) return reply.def;
  if (reply.error.app) throw new AppError(reply.error.code, reply.error.message, reply.error.details);
  if (reply.error.name === 'RangeError' && /call stack/i.test(reply.error.message))
    throw tooComplex(file, label, limits, 'it is nested too deeply');
  throw new Error(reply.error.message);
}

/**
 * Parses and validates workload text (or a file's bytes, handed over without a copy) on a
 * parser thread, within `workloadParseLimits` of its size unless `limits` says otherwise.
 * `label` names the text in a refusal ("the editor text"); by default, the file.
 */
export async function parseWorkloadOffThread(
  input: { text: string } | { bytes: Uint8Array },
  file: string,
  options: { label?: string; limits?: Partial<WorkloadParseLimits> } = {},
): Promise<WorkloadDef> {
  const size = 'text' in input ? input.text.length : input.bytes.byteLength;
  const limits = { ...workloadParseLimits(size), ...options.limits };
  return definitionOf(await pool.parse(handOver(input), file, limits), file, options.label ?? file, limits);
}

/** The input as bytes the thread can own: a view of part of a larger buffer is copied first. */
function handOver(input: { text: string } | { bytes: Uint8Array }): ParseInput {
  if ('text' in input) {
    const wellFormed = (input.text as string & { isWellFormed(): boolean }).isWellFormed();
    return wellFormed ? { bytes: new TextEncoder().encode(input.text), fromFile: false } : input;
  }
  const { bytes } = input;
  const owned = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : new Uint8Array(bytes);
  return { bytes: owned, fromFile: true };
}
