/**
 * Issue goal "overhead at the floor": Infer Lab's client beside a plain thread-per-request Python
 * streaming client (`reference_client.py`), against the same llama-server, alternating request by
 * request (which client goes first alternates too), in rounds whose ratios are printed.
 */
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { createKeepAliveAgent, streamCompletion } from '../../src/main/client/stream-client';
import { deriveRequestMetrics } from '../../src/main/metrics/request-metrics';
import { summarize } from '../../src/main/metrics/distribution';
import type { BenchRow } from './bench-row';

const ROUNDS = 5;
const PER_ROUND = 40;
const REFERENCE = path.join(import.meta.dirname, 'reference_client.py');

/** The Python client as a process that sends one request per line it is given and answers with its overhead. */
function referenceClient(baseUrl: string, headers: Record<string, string>, body: object) {
  const child = spawn('python3', [REFERENCE, baseUrl, JSON.stringify(headers), JSON.stringify(body)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = readline.createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return {
    async overhead(): Promise<number | null> {
      child.stdin.write('\n');
      const line = await lines.next();
      if (line.done) throw new Error('the Python reference client ended early');
      return JSON.parse(line.value) as number | null;
    },
    close: () => child.stdin.end(),
  };
}

/** p50 client overhead at concurrency 1 of each client, request by request alternating, and their ratio. */
export async function pythonReferenceRow(baseUrl: string, headers: Record<string, string>, body: object): Promise<BenchRow> {
  const figure = `client_overhead_ms p50, concurrency 1 (Infer Lab / Python thread-per-request client, ${ROUNDS} rounds of ${PER_ROUND} alternating pairs)`;
  if (spawnSync('python3', ['--version']).status !== 0) return { figure, value: 'skipped: no python3 on the PATH', target: 'ratio ≤ 1.00' };
  const reference = referenceClient(baseUrl, headers, body);
  const agent = createKeepAliveAgent(2);
  const ours: number[] = [];
  const theirs: number[] = [];
  const roundRatios: string[] = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const a: number[] = [];
      const b: number[] = [];
      const sendOurs = async () => {
        const overhead = deriveRequestMetrics(await streamCompletion({ baseUrl, headers, body: { ...body }, agent })).client_overhead_ms;
        if (overhead !== null) a.push(overhead);
      };
      const sendTheirs = async () => {
        const overhead = await reference.overhead();
        if (overhead !== null) b.push(overhead);
      };
      for (let pair = 0; pair < PER_ROUND; pair++) {
        const [first, second] = (pair + round) % 2 === 0 ? [sendOurs, sendTheirs] : [sendTheirs, sendOurs];
        await first();
        await second();
      }
      ours.push(...a);
      theirs.push(...b);
      roundRatios.push((summarize(a).p50! / summarize(b).p50!).toFixed(2));
    }
  } finally {
    agent.destroy();
    reference.close();
  }
  const a = summarize(ours).p50!;
  const b = summarize(theirs).p50!;
  return {
    figure,
    value: `${a.toFixed(3)} ms / ${b.toFixed(3)} ms  (ratio ${(a / b).toFixed(2)}; per round ${roundRatios.join(', ')})`,
    target: 'ratio ≤ 1.00',
  };
}
