import { Worker } from 'node:worker_threads';

/**
 * Patterns in workloads are user code: JavaScript's backtracking engine can take exponential
 * time (`^(a+)+$` against a run of a's and one other character), and nothing can interrupt a
 * regex on the thread that runs it. So every user pattern runs on a worker thread with a
 * deadline; past it the worker is terminated, the check fails with this message, and the
 * next pattern gets a fresh worker.
 */
export const REGEX_BUDGET_MS = 100;

export class RegexBudgetExceeded extends Error {
  constructor(readonly budgetMs: number) {
    super(`regex exceeded ${budgetMs} ms`);
  }
}

/** Upper bound on a worker's start-up; it is not charged to the pattern. */
const STARTUP_LIMIT_MS = 10_000;
const DONE = 0;
const RESULT = 1;
const READY = 2;
const NO_MATCH = 0;
const MATCH = 1;
const INVALID = 2;

// Plain CommonJS so the worker needs no bundler or loader, from sources and from the build alike.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const state = new Int32Array(workerData);
const compiled = new Map();
parentPort.on('message', ({ seq, source, flags, text }) => {
  let result;
  try {
    const key = flags + '/' + source;
    let pattern = compiled.get(key);
    if (!pattern) {
      pattern = new RegExp(source, flags.replace(/[gy]/g, ''));
      if (compiled.size > 1000) compiled.clear();
      compiled.set(key, pattern);
    }
    result = pattern.test(text) ? ${MATCH} : ${NO_MATCH};
  } catch {
    result = ${INVALID};
  }
  Atomics.store(state, ${RESULT}, result);
  Atomics.store(state, ${DONE}, seq);
  Atomics.notify(state, ${DONE});
});
Atomics.store(state, ${READY}, 1);
Atomics.notify(state, ${READY});
`;

// Node has had it since 16; the TypeScript lib in use predates it.
type WaitAsync = (
  array: Int32Array,
  index: number,
  value: number,
  timeoutMs: number,
) => { async: false; value: string } | { async: true; value: Promise<string> };
const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;

/** One worker answering one pattern at a time; a shared Int32Array carries the answer so a caller may block on it. */
class PatternWorker {
  private readonly state = new Int32Array(new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT));
  private readonly worker: Worker;
  private seq = 0;
  dead = false;

  constructor() {
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: this.state.buffer });
    // An idle worker must not keep the CLI alive.
    this.worker.unref();
    this.worker.on('error', () => (this.dead = true));
    this.worker.on('exit', () => (this.dead = true));
  }

  private send(source: string, flags: string, text: string): number {
    this.seq = (this.seq % 0x7fffffff) + 1;
    this.worker.postMessage({ seq: this.seq, source, flags, text });
    return this.seq;
  }

  private outcome(): boolean {
    const result = Atomics.load(this.state, RESULT);
    if (result === INVALID) throw new SyntaxError('not a valid regular expression');
    return result === MATCH;
  }

  private expire(budgetMs: number): never {
    this.dead = true;
    void this.worker.terminate();
    throw new RegexBudgetExceeded(budgetMs);
  }

  /**
   * One exchange with the worker, written once for both callers: it yields each wait it needs
   * (slot, value it still holds, timeout) and the caller waits its own way.
   */
  private *exchange(
    source: string,
    flags: string,
    text: string,
    budgetMs: number,
  ): Generator<[slot: number, value: number, timeoutMs: number], boolean> {
    if (Atomics.load(this.state, READY) === 0) yield [READY, 0, STARTUP_LIMIT_MS];
    const previous = Atomics.load(this.state, DONE);
    const seq = this.send(source, flags, text);
    const deadline = performance.now() + budgetMs;
    while (Atomics.load(this.state, DONE) !== seq) {
      const left = deadline - performance.now();
      if (left <= 0) this.expire(budgetMs);
      yield [DONE, previous, left];
    }
    return this.outcome();
  }

  /** Blocks the calling thread for at most the budget (plus the worker's first start). */
  testSync(source: string, flags: string, text: string, budgetMs: number): boolean {
    const steps = this.exchange(source, flags, text, budgetMs);
    for (let step = steps.next(); ; step = steps.next()) {
      if (step.done) return step.value;
      Atomics.wait(this.state, ...step.value);
    }
  }

  /** Never blocks the event loop; callers must not overlap (see RegexBudget). */
  async test(source: string, flags: string, text: string, budgetMs: number): Promise<boolean> {
    // Atomics.waitAsync holds no handle: while an answer is awaited the worker must keep the
    // process alive, or a CLI with nothing else pending exits mid-check (exit code 13).
    this.worker.ref();
    try {
      const steps = this.exchange(source, flags, text, budgetMs);
      for (let step = steps.next(); ; step = steps.next()) {
        if (step.done) return step.value;
        const waited = waitAsync(this.state, ...step.value);
        if (waited.async) await waited.value;
      }
    } finally {
      if (!this.dead) this.worker.unref();
    }
  }
}

/**
 * A lazily started worker per caller style: blocking callers (a JSON schema validator calls
 * `test` synchronously) and awaiting ones never share a worker, so a blocking wait can never
 * sit behind a queued asynchronous pattern.
 */
class RegexBudget {
  private blocking: PatternWorker | null = null;
  private awaiting: PatternWorker | null = null;
  private queue: Promise<unknown> = Promise.resolve();

  testSync(source: string, flags: string, text: string, budgetMs = REGEX_BUDGET_MS): boolean {
    if (!this.blocking || this.blocking.dead) this.blocking = new PatternWorker();
    return this.blocking.testSync(source, flags, text, budgetMs);
  }

  test(source: string, flags: string, text: string, budgetMs = REGEX_BUDGET_MS): Promise<boolean> {
    const run = this.queue.then(() => {
      if (!this.awaiting || this.awaiting.dead) this.awaiting = new PatternWorker();
      return this.awaiting.test(source, flags, text, budgetMs);
    });
    this.queue = run.catch(() => {});
    return run;
  }
}

export const regexBudget = new RegexBudget();

/** A stand-in for `RegExp` where only `test` is needed (Ajv's `code.regExp` option). */
export const budgetedRegExp = Object.assign(
  (source: string, flags: string): { test(text: string): boolean } => {
    // Compiling is linear and reports a bad pattern where it is written.
    new RegExp(source, flags);
    return { test: (text: string) => regexBudget.testSync(source, flags, text) };
  },
  // Ajv names the engine in standalone code, which is never generated here.
  { code: 'budgetedRegExp' },
);
