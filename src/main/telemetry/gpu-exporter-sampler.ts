import type { GpuSample } from '../../shared/contract/telemetry';
import { parseGpuExporterMetrics, type GpuExporterKind } from './gpu-exporter-parse';
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

/**
 * GPU telemetry of a remote machine from a Prometheus exporter (NVIDIA's dcgm-exporter, AMD's
 * device-metrics-exporter), scraped on the run's clock: each scrape is one sweep, each GPU keeps
 * the index it first got. The exporter samples the GPUs at its own interval (dcgm-exporter's
 * `-c`, 30 s by default), so readings repeat until it samples again.
 */
export class GpuExporterSampler {
  kind: GpuExporterKind | null = null;
  lastError: string | null = null;
  readonly hosts = new Map<number, string | null>();
  private readonly indexes = new Map<string, number>();
  private sweep = 0;
  private gpusSeen = false;
  private readonly loop: PeriodicScrape;

  constructor(
    private readonly url: string,
    private readonly clock: () => number,
    intervalMs: number,
    private readonly onSample: (sample: GpuSample) => void,
    private readonly maxBytes = EXPORTER_MAX_BYTES,
  ) {
    this.loop = new PeriodicScrape(() => this.scrape(), intervalMs);
  }

  /** Why there is no GPU telemetry: set while no scrape has given a GPU. */
  get failure(): string | null {
    if (this.gpusSeen) return null;
    if (this.lastError) return `the GPU exporter at ${this.url} failed: ${this.lastError}`;
    if (this.sweep > 0) return `the GPU exporter at ${this.url} lists no GPU memory, utilization or power series`;
    return null;
  }

  /** One reading of the page, stamped `t` (now by default): a window's edges are read on demand, not at the next tick. */
  async scrape(t = this.clock()): Promise<void> {
    try {
      const response = await fetchMetricsPage(this.url, { redirect: 'error' });
      const { kind, readings } = parseGpuExporterMetrics(await boundedText(response, this.maxBytes), t);
      this.sweep += 1;
      this.kind ??= kind;
      for (const reading of readings) {
        let index = this.indexes.get(reading.key);
        if (index === undefined) {
          index = this.indexes.size;
          this.indexes.set(reading.key, index);
          this.hosts.set(index, reading.host);
        }
        this.gpusSeen = true;
        this.onSample({ ...reading.sample, index, sweep: this.sweep });
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
  }
}
