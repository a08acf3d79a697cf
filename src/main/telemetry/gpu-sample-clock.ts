/**
 * Numbers the readings of one pass over the GPUs (or compute processes): a pass ends when
 * a key comes round again or the readings drift more than half an interval apart.
 */
export class SweepCounter {
  private id = 0;
  private keys = new Set<string>();
  private t = Number.NEGATIVE_INFINITY;

  constructor(private readonly intervalMs: number) {}

  assign(key: string, t: number): number {
    if (this.id === 0 || this.keys.has(key) || Math.abs(t - this.t) > this.intervalMs / 2) {
      this.id += 1;
      this.keys = new Set();
      this.t = t;
    }
    this.keys.add(key);
    return this.id;
  }
}

/**
 * Places nvidia-smi's own timestamps on the run's clock. Its output can reach us late
 * (a pipe is block-buffered), so arrival time would smear samples across the window
 * boundaries; a timestamp that cannot be right (before sampling began, after it arrived,
 * another time zone) falls back to arrival and is counted as such.
 */
/** Readings of the wall clock between two of the run's clock, to tie them together. */
const CLOCK_PAIRS = 5;

export class SmiClock {
  readonly counts = { device: 0, arrival: 0 };
  private readonly epochOffset: number;
  private readonly startedAt: number;

  constructor(
    private readonly clock: () => number,
    wallClock: () => number = Date.now,
  ) {
    // The wall clock read between two readings of the run's clock, a few times: a pair the thread was
    // descheduled inside is wide and would skew every placed reading by that much; the tightest stands.
    let tightest = { width: Number.POSITIVE_INFINITY, offset: 0 };
    this.startedAt = clock();
    for (let pair = 0; pair < CLOCK_PAIRS; pair++) {
      const before = clock();
      const wall = wallClock();
      const after = clock();
      if (after - before < tightest.width) tightest = { width: after - before, offset: wall - (before + after) / 2 };
    }
    this.epochOffset = tightest.offset;
  }

  place(epochMs: number | null, arrival = this.clock()): number {
    if (epochMs !== null) {
      const t = epochMs - this.epochOffset;
      // nvidia-smi stamps to the millisecond; the slack covers that and clock granularity.
      if (t >= this.startedAt - 2000 && t <= arrival + 1000) {
        this.counts.device += 1;
        return t;
      }
    }
    this.counts.arrival += 1;
    return arrival;
  }
}
