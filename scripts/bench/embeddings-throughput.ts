import http from 'node:http';
import { answerCheckFor, EMBEDDINGS_PATH, postForAnswer } from '../../src/main/client/json-answer-client';
import { createKeepAliveAgent } from '../../src/main/client/stream-client';
import { seededRandom } from '../../src/main/core/random';
import { defaultProfile } from '../../src/main/engines/llamacpp/launch-args';
import { locateEngine } from '../../src/main/engines/llamacpp/locate-engine';
import type { BenchRow } from './bench-row';
import { startManagedBenchServer } from './managed-bench-server';

const WORDS = 'the server embeds every input of a request as a sequence of its own and pools its tokens into one vector'.split(' ');
const REQUESTS_PER_ROUND = 24;
const ROUNDS = 5;
const CONCURRENCY = 2;

/** The smallest client that can report the same figure: raw http, a fresh connection each time, JSON.parse, a length check. */
function minimalEmbeddings(baseUrl: string, headers: Record<string, string>, input: string[]): Promise<boolean> {
  return new Promise((resolve) => {
    const payload = JSON.stringify({ input });
    const request = http.request(
      `${baseUrl}${EMBEDDINGS_PATH}`,
      {
        method: 'POST',
        agent: false,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () =>
          resolve(response.statusCode === 200 && (JSON.parse(body) as { data: unknown[] }).data.length === input.length),
        );
      },
    );
    request.on('error', () => resolve(false));
    request.end(payload);
  });
}

/** Inputs per second over one round of requests at a fixed concurrency; null when any request failed. */
async function inputsPerSecond(send: (input: string[]) => Promise<boolean>, batches: string[][]): Promise<number | null> {
  let next = 0;
  let failed = false;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < batches.length) {
        const batch = batches[next++]!;
        if (!(await send(batch))) failed = true;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return failed ? null : batches.reduce((sum, batch) => sum + batch.length, 0) / seconds;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? null;

/**
 * Embeddings throughput through Infer Lab's client and through a minimal one, on the same managed
 * server (demo:q8_0, mean pooling), in alternating rounds: what the client adds to inputs/s.
 */
export async function embeddingsThroughput(): Promise<BenchRow[]> {
  const { engine } = await locateEngine();
  if (!engine) return [{ figure: 'embeddings inputs/s', value: 'skipped: no llama-server (run ./bin/inferlab setup)', target: '' }];
  const server = await startManagedBenchServer(engine, 'demo:q8_0', { ...defaultProfile(), parallelSlots: CONCURRENCY }, 'embeddings');
  const random = seededRandom(3);
  const text = () => Array.from({ length: 48 }, () => WORDS[Math.floor(random() * WORDS.length)]).join(' ');
  const rows: BenchRow[] = [];
  const agent = createKeepAliveAgent(CONCURRENCY + 2);
  try {
    for (const inputsPerRequest of [1, 16]) {
      const batches = Array.from({ length: REQUESTS_PER_ROUND }, () => Array.from({ length: inputsPerRequest }, text));
      const ours = async (input: string[]) => {
        const body = { input };
        const answer = await postForAnswer(
          { baseUrl: server.baseUrl, headers: server.headers, path: EMBEDDINGS_PATH, body, agent },
          answerCheckFor(EMBEDDINGS_PATH, body)!,
        );
        return answer.error === null;
      };
      const minimal = (input: string[]) => minimalEmbeddings(server.baseUrl, server.headers, input);
      const oursRates: number[] = [];
      const minimalRates: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        // Alternating which client goes first, so neither always meets the warmer server.
        const order = round % 2 === 0 ? ([ours, minimal] as const) : ([minimal, ours] as const);
        for (const send of order) {
          const rate = await inputsPerSecond(send, batches);
          if (rate !== null) (send === ours ? oursRates : minimalRates).push(rate);
        }
      }
      const a = median(oursRates);
      const b = median(minimalRates);
      rows.push({
        figure: `embeddings inputs/s, ${inputsPerRequest} × ~48-word inputs per request, concurrency ${CONCURRENCY} (Infer Lab / minimal client, median of ${ROUNDS} rounds of ${REQUESTS_PER_ROUND})`,
        value:
          a === null || b === null
            ? `failed requests (Infer Lab ${oursRates.length}, minimal ${minimalRates.length} clean rounds)`
            : `${a.toFixed(1)} / ${b.toFixed(1)}  (Infer Lab at ${((a / b) * 100).toFixed(1)} % of the minimal client)`,
        target: 'Infer Lab within 5 % of the minimal client',
      });
    }
  } finally {
    agent.destroy();
    await server.dispose();
  }
  return rows;
}
