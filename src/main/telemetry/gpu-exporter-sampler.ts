import type { ExporterCollection, GpuSample } from '../../shared/contract/telemetry';
import { parseGpuExporterMetrics, type ExporterPage, type GpuExporterKind } from './gpu-exporter-parse';
import { fetchMetricsPage, PeriodicScrape } from './prometheus-text';

/** A GPU exporter's page for 8 GPUs with every default field is about 200 kB; far more is no exporter. */
export const EXPORTER_MAX_BYTES = 8 * 2 ** 20;

/** The body of `response`, refused beyond `maxBytes` without reading the rest. */
async function boundedText(response: Response, maxBytes: number): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) throw new Error(`the page is ${declared} bytes, over the ${maxBytes}-byte limit`);
  const reader = response.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      throw new Error(`the page passed the ${maxBytes}-byte limit`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** What the reads have shown of how often the exporter collects. */
export interface ExporterCadence {
  /** Successful reads of the page. */
  reads: number;
  /** Distinct collections among them. */
  collections: number;
  /** The longest one page was seen unchanged, first read to last (ms): the exporter collects no more often than that. */
  unchangedMs: number;
  /**
   * The median gap between successive collections (ms): from the page's timestamps, else between
   * the reads that first showed each new page, counted only after a page that was read more than
   * once (a page read once says only that the exporter collects at least as often as it is read).
   * Null until such a gap is seen.
   */
  everyMs: number | null;
  /** Pages whose timestamps lay ahead of this machine's clock, placed by the reads instead. */
  timestampsRefused: number;
}

/** An exporter's timestamp later than the answer that carried it, by more than this, is another clock's. */
const STAMP_SLACK_MS = 1000;
/** Gaps between collections kept for the cadence: the latest ones. */
const GAPS_KEPT = 64;

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/**
 * Tells the exporter's collections apart from the reads of its page. A page identical in every GPU
 * series to the read before is the same collection served again, not a new reading; a changed one
 * was collected after the read before it and by the read that showed it, or at its own timestamps.
 */
class CollectionTracker {
  private current: (ExporterCollection & { fingerprint: string; firstRead: number; lastRead: number }) | null = null;
  private reads = 0;
  private unchangedMs = 0;
  private readonly readGaps: number[] = [];
  private readonly stampGaps: number[] = [];
  private timestampsRefused = 0;

  constructor(
    /** Wall-clock ms at the run clock's zero, to place the exporter's own timestamps. */
    private readonly epochOffset: number,
  ) {}

  /** The collection read at `t` (asked for then, answered at `answeredAt`). */
  place(page: ExporterPage, t: number, answeredAt: number): ExporterCollection {
    this.reads += 1;
    const previous = this.current;
    if (previous && previous.fingerprint === page.fingerprint) {
      previous.lastRead = t;
      this.unchangedMs = Math.max(this.unchangedMs, t - previous.firstRead);
      return { ...this.publicOf(previous), repeat: true };
    }
    const stamp = this.stampOf(page, answeredAt);
    const next = {
      id: (previous?.id ?? 0) + 1,
      earliest: stamp?.earliest ?? previous?.lastRead ?? null,
      latest: stamp?.latest ?? t,
      stamped: stamp !== null,
      repeat: false,
      fingerprint: page.fingerprint,
      firstRead: t,
      lastRead: t,
    };
    if (previous && previous.stamped && next.stamped) this.keepGap(this.stampGaps, next.latest - previous.latest);
    // The first page's first read is only when reading began, not when the exporter collected.
    else if (previous && previous.id > 1 && previous.lastRead > previous.firstRead) this.keepGap(this.readGaps, t - previous.firstRead);
    this.current = next;
    return this.publicOf(next);
  }

  private stampOf(page: ExporterPage, answeredAt: number): { earliest: number; latest: number } | null {
    if (!page.stampMs) return null;
    const latest = page.stampMs.latest - this.epochOffset;
    if (latest > answeredAt + STAMP_SLACK_MS) {
      this.timestampsRefused += 1;
      return null;
    }
    return { earliest: Math.min(page.stampMs.earliest - this.epochOffset, answeredAt), latest: Math.min(latest, answeredAt) };
  }

  private keepGap(gaps: number[], gap: number): void {
    gaps.push(gap);
    if (gaps.length > GAPS_KEPT) gaps.shift();
  }

  private publicOf(collection: ExporterCollection): ExporterCollection {
    const { id, earliest, latest, stamped, repeat } = collection;
    return { id, earliest, latest, stamped, repeat };
  }

  get cadence(): ExporterCadence {
    const gaps = this.stampGaps.length > 0 ? this.stampGaps : this.readGaps;
    return {
      reads: this.reads,
      collections: this.current?.id ?? 0,
      unchangedMs: this.unchangedMs,
      everyMs: gaps.length > 0 ? median(gaps) : null,
      timestampsRefused: this.timestampsRefused,
    };
  }
}

/**
 * GPU telemetry of a remote machine from a Prometheus exporter (NVIDIA's dcgm-exporter, AMD's
 * device-metrics-exporter), scraped on the run's clock: each scrape is one sweep, each GPU keeps
 * the index it first got. The exporter samples the GPUs at its own interval (dcgm-exporter's
 * `-c`, 30 s by default) and serves its last collection until then, so each reading carries the
 * collection it shows (`collection`). Reads are taken one at a time, in the order they were asked
 * for: a window's edge read waits for a periodic one in flight, so each page is compared with the
 * one read just before it.
 */
export class GpuExporterSampler {
  kind: GpuExporterKind | null = null;
  lastError: string | null = null;
  readonly hosts = new Map<number, string | null>();
  private readonly indexes = new Map<string, number>();
  private sweep = 0;
  private gpusSeen = false;
  private readonly loop: PeriodicScrape;
  private readonly collections: CollectionTracker;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly url: string,
    private readonly clock: () => number,
    intervalMs: number,
    private readonly onSample: (sample: GpuSample) => void,
    private readonly maxBytes = EXPORTER_MAX_BYTES,
    /** Wall-clock ms now, to place the exporter's own timestamps on the run's clock. */
    wallNow = Date.now(),
  ) {
    this.loop = new PeriodicScrape(() => this.scrape(), intervalMs);
    this.collections = new CollectionTracker(wallNow - clock());
  }

  /** Why there is no GPU telemetry: set while no scrape has given a GPU. */
  get failure(): string | null {
    if (this.gpusSeen) return null;
    if (this.lastError) return `the GPU exporter at ${this.url} failed: ${this.lastError}`;
    if (this.sweep > 0) return `the GPU exporter at ${this.url} lists no GPU memory, utilization or power series`;
    return null;
  }

  /** How often the exporter was seen to collect. */
  get cadence(): ExporterCadence {
    return this.collections.cadence;
  }

  /** One reading of the page, stamped `t` (now by default): a window's edges are read on demand, not at the next tick. */
  scrape(t = this.clock()): Promise<void> {
    const read = this.queue.then(() => this.read(t));
    this.queue = read;
    return read;
  }

  private async read(t: number): Promise<void> {
    try {
      const response = await fetchMetricsPage(this.url, { redirect: 'error' });
      const { kind, readings, page } = parseGpuExporterMetrics(await boundedText(response, this.maxBytes), t);
      this.sweep += 1;
      this.kind ??= kind;
      const collection = readings.length > 0 ? this.collections.place(page, t, this.clock()) : undefined;
      for (const reading of readings) {
        let index = this.indexes.get(reading.key);
        if (index === undefined) {
          index = this.indexes.size;
          this.indexes.set(reading.key, index);
          this.hosts.set(index, reading.host);
        }
        this.gpusSeen = true;
        this.onSample({ ...reading.sample, index, sweep: this.sweep, ...(collection ? { collection } : {}) });
      }
      this.lastError = null;
    } catch (error) {
      this.lastError = (error as Error).message;
    }
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
    await this.queue;
  }
}
