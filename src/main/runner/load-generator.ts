import { seededRandom } from '../core/random';
import { arrivalGaps } from './arrivals';

/** Before the measured window the load climbs to its level over `ms`; requests sent meanwhile are flagged warmup. */
export interface RampUp {
  shape: 'linear' | 'exponential';
  ms: number;
}

export type LoadSpec =
  | { mode: 'closed'; concurrency: number; rampUp?: RampUp }
  /** `seed` picks the arrival schedule (1 unless given), so repeated looks at one rate can draw fresh arrivals. */
  | {
      mode: 'open';
      rate: number;
      burstiness: number;
      maxOutstanding: number;
      seed?: number;
      rampUp?: RampUp;
      /** A replayed trace's arrival times (ms from the window's start), used instead of drawn gaps. */
      schedule?: readonly number[];
      /** Worker threads that send the requests and read their streams, each on its own event loop (1: this thread). */
      shards?: number;
    };

/** An exponential ramp starts at this fraction of the load and doubles evenly up to it. */
export const EXPONENTIAL_RAMP_START = 1 / 16;

/**
 * The fraction of the full load at `progress` (0 to 1) through a ramp. Linear climbs from
 * zero; exponential from 1/16, doubling four times, so the first requests do not wait for a
 * rate near zero.
 */
export function rampFraction(shape: RampUp['shape'], progress: number): number {
  const x = Math.min(1, Math.max(0, progress));
  return shape === 'linear' ? x : EXPONENTIAL_RAMP_START ** (1 - x);
}

export interface StopRule {
  requests: number | null;
  durationMs: number | null;
}

/**
 * Called for each request; resolves true when the request has finished and been recorded, false
 * when it was never sent (a sender that waits for `scheduledAt` itself, halted first).
 */
export type SendRequest = (index: number, warmup: boolean, scheduledAt: number | null) => Promise<boolean>;

export interface LoadOutcome {
  /** Monotonic ms: first measured send and last measured completion. */
  measuredStart: number | null;
  measuredEnd: number | null;
  sent: number;
  stoppedBy: 'requests' | 'duration' | 'halted';
}

export interface GenerateLoadOptions {
  load: LoadSpec;
  stop: StopRule;
  warmup: number;
  send: SendRequest;
  halt: AbortSignal;
  seed?: number;
  /** Called once, when the measured window opens (after the warmup requests and any ramp). */
  onMeasuredStart?: () => void;
  /**
   * Awaited once the warmup requests are done, before anything measured is sent: runs that must
   * start their measured requests at one instant (a race's lanes run together) meet here.
   */
  atStartLine?: () => Promise<void>;
  /**
   * Open loop: each request is handed to `send` this long before its scheduled time, for a
   * sender that waits for the time itself on a loop of its own (stream shards). 0: at its time.
   */
  dispatchLeadMs?: number;
}

/** The warmup requests, before anything is measured: as many at once as the load's concurrency (one in open loop). */
async function sendWarmup(options: GenerateLoadOptions, nextIndex: () => number) {
  const workers = options.load.mode === 'closed' ? options.load.concurrency : 1;
  let left = options.warmup;
  await Promise.all(
    Array.from({ length: Math.min(workers, Math.max(left, 0)) }, async () => {
      while (left > 0 && !options.halt.aborted) {
        left -= 1;
        await options.send(nextIndex(), true, null);
      }
    }),
  );
}

/**
 * Drives requests: warmup first (flagged, excluded), then any ramp (the load climbing to its
 * level, its requests flagged warmup too), then the measured window in closed loop (a
 * completion starts the next request) or open loop (scheduled arrivals, bounded
 * outstanding). `halt` stops scheduling new requests; in-flight ones are awaited.
 */
export async function generateLoad(options: GenerateLoadOptions): Promise<LoadOutcome> {
  const { load, stop, send, halt } = options;
  let index = 0;
  const nextIndex = () => index++;
  await sendWarmup(options, nextIndex);
  if (!halt.aborted) await options.atStartLine?.();

  const outcome: LoadOutcome = { measuredStart: null, measuredEnd: null, sent: 0, stoppedBy: 'requests' };
  if (halt.aborted) return { ...outcome, stoppedBy: 'halted' };
  const ramp = load.rampUp && load.rampUp.ms > 0 ? load.rampUp : null;
  const start = performance.now();
  // The window opens when the ramp ends; requests still in flight from the ramp keep loading the server, flagged warmup.
  const windowStart = start + (ramp?.ms ?? 0);
  const ramping = () => ramp !== null && performance.now() < windowStart;
  const openWindow = () => {
    if (outcome.measuredStart !== null) return;
    outcome.measuredStart = performance.now();
    options.onMeasuredStart?.();
  };
  if (!ramp) openWindow();
  const deadline = stop.durationMs === null ? Number.POSITIVE_INFINITY : windowStart + stop.durationMs;
  // `at`: when the request would be sent, which a request handed over ahead of its time has not reached yet.
  const more = (at = performance.now()) => {
    if (halt.aborted) return ((outcome.stoppedBy = 'halted'), false);
    if (stop.requests !== null && outcome.sent >= stop.requests) return ((outcome.stoppedBy = 'requests'), false);
    if (at >= deadline) return ((outcome.stoppedBy = 'duration'), false);
    return true;
  };
  const measured = async (scheduledAt: number | null) => {
    outcome.sent += 1;
    if (!(await send(nextIndex(), false, scheduledAt))) {
      outcome.sent -= 1;
      return;
    }
    outcome.measuredEnd = Math.max(outcome.measuredEnd ?? 0, performance.now());
  };

  if (load.mode === 'closed') {
    await Promise.all(
      Array.from({ length: load.concurrency }, async (_, worker) => {
        // Worker k joins once the ramp's load reaches k / concurrency of the full load.
        if (ramp) await waitUntil(start + rampProgressAt(ramp.shape, worker / load.concurrency) * ramp.ms);
        while (!halt.aborted && ramping()) await send(nextIndex(), true, null);
        openWindow();
        while (more()) await measured(null);
      }),
    );
    return outcome;
  }

  const gap = arrivalGaps(load.rate, load.burstiness, seededRandom(options.seed ?? load.seed ?? 1));
  // Gaps are drawn at the full rate on a clock that runs at the ramp's fraction of real time (time-rescaled arrivals).
  const toTime = ramp ? rampClock(ramp) : (elapsed: number) => elapsed;
  const inFlight = new Set<Promise<unknown>>();
  const lead = options.dispatchLeadMs ?? 0;
  let atFullRate = 0;
  let due = start + (load.schedule?.[0] ?? 0);
  while (!halt.aborted) {
    const warmup = ramp !== null && due < windowStart;
    if (!warmup && !more(due)) break;
    // Handed over ahead of its time, a request needs no sub-millisecond wake-up here: the timer is enough.
    await waitUntil(due - lead, lead === 0);
    // At the outstanding bound the request waits for a slot; the lateness is recorded as slip.
    while (inFlight.size >= load.maxOutstanding) await Promise.race(inFlight);
    if (halt.aborted || (!warmup && !more(Math.max(due, performance.now())))) break;
    if (!warmup) openWindow();
    const request = (warmup ? send(nextIndex(), true, due) : measured(due)).finally(() => inFlight.delete(request));
    inFlight.add(request);
    if (load.schedule) {
      if (outcome.sent >= load.schedule.length) break;
      due = start + load.schedule[outcome.sent]!;
      continue;
    }
    atFullRate += gap();
    due = start + toTime(atFullRate);
  }
  if (halt.aborted) outcome.stoppedBy = 'halted';
  await Promise.all(inFlight);
  return outcome;
}

/**
 * Real time (ms from the ramp's start) at which `elapsed` ms of full-rate time have passed:
 * the inverse of the integral of the ramp's fraction of the rate. Linear: t²/(2T) during the
 * ramp; exponential from a = 1/16: T·a·(a^(−t/T) − 1)/ln(1/a); after the ramp, one for one.
 */
export function rampClock(ramp: RampUp): (elapsed: number) => number {
  const T = ramp.ms;
  if (ramp.shape === 'linear') {
    const atEnd = T / 2;
    return (elapsed) => (elapsed <= atEnd ? Math.sqrt(2 * T * elapsed) : T + (elapsed - atEnd));
  }
  const a = EXPONENTIAL_RAMP_START;
  const k = Math.log(1 / a);
  const atEnd = (T * (1 - a)) / k;
  return (elapsed) => (elapsed <= atEnd ? (T * Math.log(1 + (elapsed * k) / (T * a))) / k : T + (elapsed - atEnd));
}

/** Where through a ramp (0 to 1) the load first reaches `fraction` of the full load. */
export function rampProgressAt(shape: RampUp['shape'], fraction: number): number {
  if (fraction <= 0) return 0;
  if (shape === 'linear') return Math.min(1, fraction);
  return Math.min(1, Math.max(0, 1 - Math.log(fraction) / Math.log(EXPONENTIAL_RAMP_START)));
}

/**
 * One step toward a performance.now() time: a timer to half a millisecond before it, or
 * (`precise`) one turn of the event loop within the last millisecond. Resolves false, without
 * waiting, once the time has come (or, not `precise`, is within a millisecond).
 */
export async function stepToward(due: number, precise = true): Promise<boolean> {
  const wait = due - performance.now();
  if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait - 0.5));
  else if (precise && wait > 0) await new Promise((resolve) => setImmediate(resolve));
  else return false;
  return true;
}

/** Sleeps until a performance.now() time: a timer for the bulk, then (`precise`) yielding to the event loop for the last millisecond. */
async function waitUntil(due: number, precise = true): Promise<void> {
  while (await stepToward(due, precise));
}
