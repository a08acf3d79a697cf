import type { ServerMetricsSample } from '../../shared/contract/telemetry';
import { fetchMetricsPage, parseExposition, PeriodicScrape } from './prometheus-text';

/** Counter and gauge names per engine: llama.cpp's `llamacpp:*`, vLLM's `vllm:*`, SGLang's `sglang:*`. */
const NAMES = {
  promptTokensTotal: ['llamacpp:prompt_tokens_total', 'vllm:prompt_tokens_total', 'sglang:prompt_tokens_total'],
  cachedPromptTokensTotal: ['llamacpp:prompt_tokens_cached_total', 'vllm:prefix_cache_hits_total', 'sglang:cached_tokens_total'],
  predictedTokensTotal: ['llamacpp:tokens_predicted_total', 'vllm:generation_tokens_total', 'sglang:generation_tokens_total'],
  requestsProcessing: ['llamacpp:requests_processing', 'vllm:num_requests_running', 'sglang:num_running_reqs'],
  requestsDeferred: ['llamacpp:requests_deferred', 'vllm:num_requests_waiting', 'sglang:num_queue_reqs'],
} as const;

/**
 * Reads the figures Infer Lab uses from Prometheus text; families it does not know are ignored.
 * Text the exposition parser refuses is an `invalid_input` AppError: the endpoint is not trusted.
 */
export function parseServerMetrics(text: string, t: number): ServerMetricsSample {
  const values = new Map<string, number>();
  for (const family of parseExposition(text)) {
    const sum = family.metrics.reduce((total, metric) => total + (Number(metric.value ?? metric.sum ?? 0) || 0), 0);
    values.set(family.name, sum);
  }
  const pick = (names: readonly string[]) => {
    for (const name of names) if (values.has(name)) return values.get(name)!;
    return null;
  };
  return {
    t,
    promptTokensTotal: pick(NAMES.promptTokensTotal),
    cachedPromptTokensTotal: pick(NAMES.cachedPromptTokensTotal),
    predictedTokensTotal: pick(NAMES.predictedTokensTotal),
    requestsProcessing: pick(NAMES.requestsProcessing),
    requestsDeferred: pick(NAMES.requestsDeferred),
  };
}

/** Scrapes a Prometheus endpoint at 1 Hz on the run's clock. */
export class MetricsScraper {
  readonly samples: ServerMetricsSample[] = [];
  private readonly loop: PeriodicScrape;
  /** The latest reading was given up at its timeout: the server is hung or stopped. */
  private lastTimedOut = false;

  constructor(
    private readonly url: string,
    private readonly clock: () => number,
    intervalMs = 1000,
    private readonly headers: Readonly<Record<string, string>> = {},
  ) {
    this.loop = new PeriodicScrape(() => this.scrape(), intervalMs);
  }

  /**
   * One reading, stamped when it was asked for: the server answers /metrics from its own
   * task queue, so the counters are those of that moment, not of the answer's arrival.
   */
  async scrape(t = this.clock()): Promise<void> {
    try {
      const response = await fetchMetricsPage(this.url, { headers: { ...this.headers } });
      const sample = parseServerMetrics(await response.text(), t);
      // A reading asked for at the window boundary can overtake a slower periodic one.
      const at = this.samples.findIndex((existing) => existing.t > t);
      if (at < 0) this.samples.push(sample);
      else this.samples.splice(at, 0, sample);
      this.lastTimedOut = false;
    } catch (error) {
      // A missed reading is a gap: counters are differenced between the readings around the window, gauges averaged over those taken.
      this.lastTimedOut = (error as Error).name === 'TimeoutError';
    }
  }

  start(): void {
    this.loop.start();
  }

  /**
   * Stops, after one last scrape so the run's counters include its final requests; not where the
   * latest one timed out, since a hung server would only hold the run's end for another timeout.
   */
  async stop(): Promise<void> {
    if ((await this.loop.stop()) && !this.lastTimedOut) await this.scrape();
  }
}
