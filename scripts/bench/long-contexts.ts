/**
 * Issue goal "long contexts": the client's CPU per token for a 32k-token streamed answer against
 * 1k ones, and per prompt token for a 128k-token prompt against a 1k one, through the same client
 * a run uses (streamCompletion), against the SSE load target in burst mode (its own process).
 *
 * Each answer sample is the same 32,768 tokens, one answer or 32 of 1k, so both carry the same
 * allocation; a collection starts each sample (with --expose-gc, as `npm run bench` runs), so
 * garbage left by the steps before is not billed to whichever sample meets it; a first round
 * warms the code and is not counted; the order alternates by round.
 */
import { createKeepAliveAgent, streamCompletion } from '../../src/main/client/stream-client';
import type { BenchRow } from './bench-row';
import { startLoadTarget } from './bench-processes';

const ROUNDS = 5;
/** About four characters per token: the load target counts a prompt that way too. */
const CHARS_PER_TOKEN = 4;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const collect = (globalThis as { gc?: () => void }).gc ?? (() => {});

/** CPU microseconds this process spent on `requests` requests in turn, per token of the part being measured. */
async function cpuPerToken(
  url: string,
  agent: ReturnType<typeof createKeepAliveAgent>,
  shape: { promptTokens: number; answerTokens: number; requests: number; per: 'prompt' | 'answer' },
) {
  const content = 'word '.repeat(Math.max(1, Math.round((shape.promptTokens * CHARS_PER_TOKEN) / 5)));
  collect();
  const before = process.cpuUsage();
  for (let request = 0; request < shape.requests; request += 1) {
    const completion = await streamCompletion({
      baseUrl: url,
      agent,
      body: { model: 'load-target', messages: [{ role: 'user', content }], max_tokens: shape.answerTokens },
    });
    if (completion.error) throw new Error(`long-context request failed: ${completion.error.message}`);
    if (completion.answerChunkTimes.length !== shape.answerTokens)
      throw new Error(`expected ${shape.answerTokens} tokens, received ${completion.answerChunkTimes.length}`);
  }
  const cpu = process.cpuUsage(before);
  const tokens = shape.requests * (shape.per === 'prompt' ? shape.promptTokens : shape.answerTokens);
  return (cpu.user + cpu.system) / tokens;
}

export async function longContexts(): Promise<BenchRow[]> {
  const target = await startLoadTarget(8, 0);
  const agent = createKeepAliveAgent(4);
  const answer = { short: [] as number[], long: [] as number[] };
  const prompt = { short: [] as number[], long: [] as number[] };
  try {
    const samples: [number[], Parameters<typeof cpuPerToken>[2]][] = [
      [answer.short, { promptTokens: 16, answerTokens: 1024, requests: 32, per: 'answer' }],
      [answer.long, { promptTokens: 16, answerTokens: 32_768, requests: 1, per: 'answer' }],
      [prompt.short, { promptTokens: 1024, answerTokens: 1, requests: 1, per: 'prompt' }],
      [prompt.long, { promptTokens: 131_072, answerTokens: 1, requests: 1, per: 'prompt' }],
    ];
    for (let round = 0; round <= ROUNDS; round += 1) {
      const order = round % 2 === 0 ? samples : [...samples].reverse();
      for (const [into, shape] of order) {
        const perToken = await cpuPerToken(target.url, agent, shape);
        if (round > 0) into.push(perToken);
      }
    }
  } finally {
    agent.destroy();
    target.stop();
  }
  const row = (figure: string, short: number[], long: number[]) => ({
    figure,
    value: `${median(long).toFixed(2)} / ${median(short).toFixed(2)} µs per token (ratio ${(median(long) / median(short)).toFixed(2)})`,
    target: 'ratio ≤ 1.10',
  });
  return [
    row(`client CPU per answer token, one 32k-token answer / 32 of 1k (median of ${ROUNDS}, burst load target)`, answer.short, answer.long),
    row(`client CPU per prompt token, 128k-token prompt / 1k (median of ${ROUNDS})`, prompt.short, prompt.long),
  ];
}
