/**
 * Client overhead at concurrency 32 with the server taken out of it. Against llama-server the
 * figure moves by milliseconds from round to round with the server's batching, so resolving
 * ±0.5 ms took hundreds of rounds. Against the batched target (batched-stream-target.ts) the
 * server's own time is exact, so what is left is the client: its request write, its reading of
 * 32 streams whose tokens arrive together, and its end of request.
 *
 * Whole rounds alternate between the clients (ABBA), never requests: requests of both clients
 * in flight together would share one event loop, and each would slow the other's events.
 * A control client (Infer Lab's with extra work per token) shows the figure can see a cost of
 * the size that separates the two clients' CPU per event in the closed-loop rows.
 *
 * Answers of one length make a herd: every stream ends on the same step and all 32 start again
 * together, so each request waits for the others' request and response handling; the per-pair
 * spread is then about 2.5 ms (docs/PERFORMANCE.md), and what is measured is mostly the herd.
 */
import type http from 'node:http';
import { deriveRequestMetrics } from '../../src/main/metrics/request-metrics';
import { summarize } from '../../src/main/metrics/distribution';
import { createKeepAliveAgent, streamCompletion } from '../../src/main/client/stream-client';
import type { BenchRow } from './bench-row';
import { startBenchServer } from './bench-processes';
import { minimalRequest } from './minimal-request';
import { roundsForHalfWidth, roundsInterval } from './paired-rounds';

const CONCURRENCY = 32;
const STEP_MS = 10;
const REQUESTS_PER_WORKER = 8;
const ROUND_PAIRS = Math.max(2, Number(process.env.INFERLAB_BENCH_CLIENT_ROUNDS) || 10);
/** About what Infer Lab's client spends per event beyond the minimal client's (the closed-loop CPU rows). */
const CONTROL_EXTRA_MICROS = 15;

type Client = (baseUrl: string, maxTokens: number) => Promise<number | null>;

const body = (maxTokens: number) => ({ messages: [{ role: 'user', content: 'Count.' }], max_tokens: maxTokens });
/**
 * Answer lengths from 8 to 24 tokens, the same sequence for every client: streams of one length
 * would all end on the same step and all start again together, a herd whose queueing swamps
 * what either client does.
 */
const answerLength = (worker: number, request: number) => 8 + ((worker * 7 + request * 5) % 17);

function inferLabClient(agent: http.Agent, extraMicrosPerToken = 0): Client {
  const onText =
    extraMicrosPerToken > 0
      ? () => {
          const until = performance.now() + extraMicrosPerToken / 1000;
          while (performance.now() < until);
        }
      : undefined;
  return async (baseUrl, maxTokens) =>
    deriveRequestMetrics(await streamCompletion({ baseUrl, body: body(maxTokens), agent, onText })).client_overhead_ms;
}

const minimalClient: Client = (baseUrl, maxTokens) =>
  minimalRequest(baseUrl, {}, { ...body(maxTokens), stream_options: { include_usage: true } });

/** One round: CONCURRENCY users in a closed loop; its figure is the median overhead of its requests. */
async function roundMedian(client: Client, baseUrl: string): Promise<number> {
  const overheads: number[] = [];
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, worker) => {
      for (let i = 0; i < REQUESTS_PER_WORKER; i++) {
        const overhead = await client(baseUrl, answerLength(worker, i));
        if (overhead !== null) overheads.push(overhead);
      }
    }),
  );
  const median = summarize(overheads).p50;
  if (median === null || overheads.length < CONCURRENCY * REQUESTS_PER_WORKER)
    throw new Error(`a round completed ${overheads.length} of ${CONCURRENCY * REQUESTS_PER_WORKER} requests against the batched target`);
  return median;
}

/** Per pair of rounds, `a`'s median less `b`'s, in ABBA order so neither client always runs second. */
async function pairedRoundDifferences(
  a: Client,
  b: Client,
  baseUrl: string,
  pairs: number,
): Promise<{ a: number[]; b: number[]; differences: number[] }> {
  const result = { a: [] as number[], b: [] as number[], differences: [] as number[] };
  for (let pair = 0; pair < pairs; pair++) {
    const aFirst = pair % 2 === 0;
    const first = await roundMedian(aFirst ? a : b, baseUrl);
    const second = await roundMedian(aFirst ? b : a, baseUrl);
    const [aMedian, bMedian] = aFirst ? [first, second] : [second, first];
    result.a.push(aMedian);
    result.b.push(bMedian);
    result.differences.push(aMedian - bMedian);
  }
  return result;
}

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

function describe(differences: number[]): string {
  const interval = roundsInterval(differences)!;
  return (
    `mean ${interval.mean.toFixed(3)} ms, 95 % CI [${interval.low.toFixed(3)}, ${interval.high.toFixed(3)}] over ${interval.rounds} pairs of rounds, ` +
    `sd ${interval.sd.toFixed(3)}: ±0.5 ms takes ${roundsForHalfWidth(interval.sd, 0.5)} pairs`
  );
}

export async function clientOnlyOverhead(): Promise<BenchRow[]> {
  const target = await startBenchServer('batched-stream-target.ts', ['16', String(STEP_MS)]);
  const agent = createKeepAliveAgent(CONCURRENCY + 4);
  try {
    const ours = inferLabClient(agent);
    // Warm both clients' code and the loopback before anything counts.
    await roundMedian(ours, target.url);
    await roundMedian(minimalClient, target.url);
    const main = await pairedRoundDifferences(ours, minimalClient, target.url, ROUND_PAIRS);
    const control = await pairedRoundDifferences(
      inferLabClient(agent, CONTROL_EXTRA_MICROS),
      ours,
      target.url,
      Math.max(2, Math.ceil(ROUND_PAIRS / 2)),
    );
    const setting = `${CONCURRENCY} streams, a token to each every ${STEP_MS} ms, 8–24 tokens, ${CONCURRENCY * REQUESTS_PER_WORKER} requests a round`;
    return [
      {
        figure: `client_overhead_ms p50, concurrency ${CONCURRENCY}, client only (batched target: ${setting}; Infer Lab / minimal client)`,
        value: `${mean(main.a).toFixed(3)} / ${mean(main.b).toFixed(3)} ms (difference ${describe(main.differences)})`,
        target: 'interval within +0.5 ms',
      },
      {
        figure: `  control: Infer Lab's client with ${CONTROL_EXTRA_MICROS} µs more work per token, less Infer Lab's (must show a cost)`,
        value: describe(control.differences),
        target: 'interval above 0',
      },
    ];
  } finally {
    agent.destroy();
    target.stop();
  }
}
