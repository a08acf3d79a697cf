/**
 * Issue goal "long contexts": the client's CPU per token for a 32k-token streamed answer against a
 * 1k one, and per prompt token for a 128k-token prompt against a 1k one, through the same client
 * a run uses (streamCompletion), against the SSE load target in burst mode (its own process).
 */
import { createKeepAliveAgent, streamCompletion } from '../../src/main/client/stream-client';
import type { BenchRow } from './bench-row';
import { startLoadTarget } from './bench-processes';

const ROUNDS = 5;
/** About four characters per token: the load target counts a prompt that way too. */
const CHARS_PER_TOKEN = 4;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** CPU microseconds this process spent on one request, per token of the part being measured. */
async function cpuPerToken(
  url: string,
  agent: ReturnType<typeof createKeepAliveAgent>,
  promptTokens: number,
  answerTokens: number,
  per: number,
) {
  const content = 'word '.repeat(Math.max(1, Math.round((promptTokens * CHARS_PER_TOKEN) / 5)));
  const before = process.cpuUsage();
  const completion = await streamCompletion({
    baseUrl: url,
    agent,
    body: { model: 'load-target', messages: [{ role: 'user', content }], max_tokens: answerTokens },
  });
  const cpu = process.cpuUsage(before);
  if (completion.error) throw new Error(`long-context request failed: ${completion.error.message}`);
  if (completion.answerChunkTimes.length !== answerTokens)
    throw new Error(`expected ${answerTokens} tokens, received ${completion.answerChunkTimes.length}`);
  return (cpu.user + cpu.system) / per;
}

export async function longContexts(): Promise<BenchRow[]> {
  const target = await startLoadTarget(8, 0);
  const agent = createKeepAliveAgent(4);
  const answer = { short: [] as number[], long: [] as number[] };
  const prompt = { short: [] as number[], long: [] as number[] };
  try {
    for (let round = 0; round < ROUNDS; round += 1) {
      answer.short.push(await cpuPerToken(target.url, agent, 16, 1024, 1024));
      answer.long.push(await cpuPerToken(target.url, agent, 16, 32_768, 32_768));
      prompt.short.push(await cpuPerToken(target.url, agent, 1024, 1, 1024));
      prompt.long.push(await cpuPerToken(target.url, agent, 131_072, 1, 131_072));
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
    row(`client CPU per answer token, 32k-token answer / 1k (median of ${ROUNDS}, burst load target)`, answer.short, answer.long),
    row(`client CPU per prompt token, 128k-token prompt / 1k (median of ${ROUNDS})`, prompt.short, prompt.long),
  ];
}
