import type { RequestMetrics } from '../../shared/contract/measurement';
import type { StreamedCompletion } from '../runner/stream-client';

/**
 * Derives the per-request numbers of DESIGN.md's measurement contract from what the client
 * observed. Anything that cannot be measured is null, never zero.
 */
export function deriveRequestMetrics(completion: StreamedCompletion): RequestMetrics {
  const chunks = completion.contentChunkTimes;
  const first = chunks[0];
  const last = chunks[chunks.length - 1];
  const ttft = first === undefined ? null : first - completion.t0;
  const e2e = completion.endAt === null || completion.error ? null : completion.endAt - completion.t0;

  const usageTokens = completion.usage?.completion_tokens ?? null;
  const outputTokens = usageTokens ?? (chunks.length > 0 ? chunks.length : null);
  const outputSource = usageTokens !== null ? 'usage' : chunks.length > 0 ? 'client_chunks' : null;

  const tpot = first !== undefined && last !== undefined && outputTokens !== null && outputTokens > 1 ? (last - first) / (outputTokens - 1) : null;
  const itl: number[] = [];
  for (let i = 1; i < chunks.length; i++) itl.push(chunks[i]! - chunks[i - 1]!);

  const timings = completion.timings;
  // Estimate, labelled so: what TTFT holds beyond prefill and the first decode step.
  const firstDecodeStep = timings && timings.predicted_n > 0 ? timings.predicted_ms / timings.predicted_n : null;
  const queue = ttft !== null && timings && firstDecodeStep !== null ? Math.max(0, ttft - timings.prompt_ms - firstDecodeStep) : null;
  const overhead = e2e !== null && timings ? e2e - (timings.prompt_ms + timings.predicted_ms) : null;
  const decodeRate = timings && timings.predicted_ms > 0 ? (timings.predicted_n / timings.predicted_ms) * 1000 : null;

  return {
    ttft_ms: ttft,
    e2e_ms: e2e,
    tpot_ms: tpot,
    itl_ms: itl,
    output_tokens: outputTokens,
    output_tokens_source: outputSource,
    queue_ms: queue,
    client_overhead_ms: overhead,
    decode_tokens_per_s: decodeRate,
  };
}
