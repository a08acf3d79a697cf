import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';

export type MetricFamilies = ReturnType<typeof parsePrometheusTextFormat>;

/**
 * The exposition text's families, or an `invalid_input` error naming the line the parser
 * refused (`source` says whose page it was): a scraped endpoint is not trusted.
 */
export function parseExposition(text: string, source = ''): MetricFamilies {
  try {
    return parsePrometheusTextFormat(text);
  } catch (error) {
    throw new AppError(
      ErrorCode.InvalidInput,
      `Invalid Prometheus metrics${source ? ` from ${source}` : ''}: ${(error as Error).message}`.slice(0, 300),
    );
  }
}

/**
 * Runs `scrape` at once and then every `intervalMs` on a timer that keeps no process alive,
 * never two at a time (a slow endpoint skips ticks); `stop` waits for the one in flight.
 */
const SCRAPE_TIMEOUT_MS = 2000;

/** One GET of a metrics page, given 2 s; an answer other than 2xx is an error naming its status. */
export async function fetchMetricsPage(url: string, init: Omit<RequestInit, 'signal'> = {}): Promise<Response> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(SCRAPE_TIMEOUT_MS) });
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  return response;
}

export class PeriodicScrape {
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<void> | null = null;

  constructor(
    private readonly scrape: () => Promise<void>,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    if (this.timer) return;
    this.tick();
    this.timer = setInterval(() => this.tick(), this.intervalMs);
    this.timer.unref();
  }

  private tick(): void {
    this.inFlight ??= this.scrape().finally(() => (this.inFlight = null));
  }

  /** False when it was not running. */
  async stop(): Promise<boolean> {
    if (!this.timer) return false;
    clearInterval(this.timer);
    this.timer = null;
    await this.inFlight;
    return true;
  }
}
