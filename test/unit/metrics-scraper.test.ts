import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { MetricsScraper } from '../../src/main/telemetry/metrics-scraper';

/** A /metrics endpoint that counts the requests it gets, and answers them or (hung) never does. */
async function metricsEndpoint(hung: boolean): Promise<{ url: string; requests: () => number; close(): Promise<void> }> {
  let requests = 0;
  const server = http.createServer((_request, response) => {
    requests++;
    if (!hung) response.end('# TYPE llamacpp:tokens_predicted_total counter\nllamacpp:tokens_predicted_total 12\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`,
    requests: () => requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()).closeAllConnections()),
  };
}

const endpoints: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(endpoints.splice(0).map((endpoint) => endpoint.close()));
});

async function until(condition: () => boolean, ms = 5000): Promise<void> {
  for (const started = performance.now(); !condition() && performance.now() - started < ms;)
    await new Promise((resolve) => setTimeout(resolve, 20));
}

describe('the /metrics scraper on the way out', () => {
  it('reads once more as it stops, so the last requests are counted', async () => {
    const endpoint = await metricsEndpoint(false);
    endpoints.push(endpoint);
    // An interval longer than the test: the only readings are the first and the last.
    const scraper = new MetricsScraper(endpoint.url, () => performance.now(), 60_000);
    scraper.start();
    await until(() => scraper.samples.length === 1);
    await scraper.stop();
    expect(endpoint.requests()).toBe(2);
    expect(scraper.samples.map((sample) => sample.predictedTokensTotal)).toEqual([12, 12]);
  });

  it('does not ask a server again whose latest reading timed out: a hung server would hold the run for another timeout', async () => {
    const endpoint = await metricsEndpoint(true);
    endpoints.push(endpoint);
    const scraper = new MetricsScraper(endpoint.url, () => performance.now(), 60_000);
    scraper.start();
    await until(() => endpoint.requests() === 1);
    // The first reading is given up at its timeout (2 s); stopping then sends nothing more.
    await scraper.stop();
    expect(endpoint.requests()).toBe(1);
    expect(scraper.samples).toEqual([]);
  });
});
