/**
 * Issue goal "overhead at the floor": Infer Lab's client beside a plain thread-per-request Python
 * streaming client (`reference_client.py`), in alternating rounds against the same llama-server.
 */
import { execFile, spawnSync } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { createKeepAliveAgent, streamCompletion } from '../../src/main/client/stream-client';
import { deriveRequestMetrics } from '../../src/main/metrics/request-metrics';
import { summarize } from '../../src/main/metrics/distribution';
import type { BenchRow } from './bench-row';

const ROUNDS = 5;
const PER_ROUND = 40;
const REFERENCE = path.join(import.meta.dirname, 'reference_client.py');

async function referenceRound(baseUrl: string, headers: Record<string, string>, body: object): Promise<number[]> {
  const { stdout } = await promisify(execFile)('python3', [
    REFERENCE,
    baseUrl,
    JSON.stringify(headers),
    JSON.stringify(body),
    String(PER_ROUND),
  ]);
  return (JSON.parse(stdout) as (number | null)[]).filter((value): value is number => value !== null);
}

async function inferLabRound(baseUrl: string, headers: Record<string, string>, body: object): Promise<number[]> {
  const agent = createKeepAliveAgent(2);
  const overheads: number[] = [];
  try {
    for (let i = 0; i < PER_ROUND; i++) {
      const overhead = deriveRequestMetrics(await streamCompletion({ baseUrl, headers, body: { ...body }, agent })).client_overhead_ms;
      if (overhead !== null) overheads.push(overhead);
    }
  } finally {
    agent.destroy();
  }
  return overheads;
}

/** p50 client overhead at concurrency 1 of each client, rounds alternating, and their ratio. */
export async function pythonReferenceRow(baseUrl: string, headers: Record<string, string>, body: object): Promise<BenchRow> {
  const figure = `client_overhead_ms p50, concurrency 1 (Infer Lab / Python thread-per-request client, ${ROUNDS} alternating rounds of ${PER_ROUND})`;
  if (spawnSync('python3', ['--version']).status !== 0) return { figure, value: 'skipped: no python3 on the PATH', target: 'ratio ≤ 1.00' };
  const ours: number[] = [];
  const reference: number[] = [];
  const roundRatios: string[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const a = await inferLabRound(baseUrl, headers, body);
    const b = await referenceRound(baseUrl, headers, body);
    ours.push(...a);
    reference.push(...b);
    roundRatios.push((summarize(a).p50! / summarize(b).p50!).toFixed(2));
  }
  const a = summarize(ours).p50!;
  const b = summarize(reference).p50!;
  return {
    figure,
    value: `${a.toFixed(3)} ms / ${b.toFixed(3)} ms  (ratio ${(a / b).toFixed(2)}; per round ${roundRatios.join(', ')})`,
    target: 'ratio ≤ 1.00',
  };
}
