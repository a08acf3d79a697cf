import type { RequestMetrics } from '../../shared/contract/measurement';
import type { StreamedCompletion } from '../client/stream-client';
import { callArguments, NOT_JSON } from '../../shared/tool-call-arguments';

/**
 * Derives the per-request numbers of the measurement contract (docs/METRICS.md) from what the client
 * observed (docs/METRICS.md has every definition). Anything that cannot be measured is null,
 * never zero. `scheduledAt` is the open-loop arrival time on the same clock as `t0`.
 */
export function deriveRequestMetrics(completion: StreamedCompletion, context: { scheduledAt?: number | null } = {}): RequestMetrics {
  const chunks = completion.contentChunkTimes;
  const first = chunks[0];
  const ttft = first === undefined ? null : first - completion.t0;
  const firstReasoning = completion.reasoningChunkTimes[0];
  const firstAnswer = completion.answerChunkTimes[0];
  // Generation ends at the chunk carrying finish_reason: llama.cpp samples the end-of-sequence
  // token (and counts it in completion_tokens) without streaming content for it, so the last
  // content chunk would cut one decode step off. Usage and [DONE] follow it and are not
  // generation. A stream without a finish chunk is failed (partial) and gets no e2e, so the
  // stream-end fallback only serves completions recorded without a finish time.
  const endOfGeneration = completion.finishAt ?? completion.endAt;
  const e2e = endOfGeneration === null || completion.error ? null : endOfGeneration - completion.t0;

  const usageTokens = completion.usage?.completion_tokens ?? null;
  // Fallback, labelled: one token per chunk. It misses the unstreamed end-of-sequence token
  // and chunks holding several tokens, so it undercounts.
  const outputTokens = usageTokens ?? (chunks.length > 0 ? chunks.length : null);
  const outputSource = usageTokens !== null ? 'usage' : chunks.length > 0 ? 'client_chunks' : null;

  // vLLM's TPOT: the e2e − ttft span holds exactly output_tokens − 1 decode steps when the
  // end-of-sequence token is counted on both sides. One token has no step: null, not 0.
  const tpot = ttft !== null && e2e !== null && outputTokens !== null && outputTokens > 1 ? (e2e - ttft) / (outputTokens - 1) : null;
  const itl: number[] = [];
  for (let i = 1; i < chunks.length; i++) itl.push(chunks[i]! - chunks[i - 1]!);

  const timings = completion.timings;
  // llama.cpp's prompt_ms runs from the slot starting the prompt to the first token being
  // sampled, so what TTFT holds beyond it is transport, tokenization and any wait for a slot.
  // An estimate: a first token that streams nothing (a held-back partial stop word) moves TTFT.
  const queue = ttft !== null && timings ? Math.max(0, ttft - timings.prompt_ms) : null;
  const overhead = e2e !== null && timings ? e2e - (timings.prompt_ms + timings.predicted_ms) : null;
  // predicted_ms runs from the first sampled token to the last one: predicted_n − 1 decode
  // steps (the first token comes from the prompt's logits and is timed in prompt_ms).
  const decodeRate =
    timings && timings.predicted_n > 1 && timings.predicted_ms > 0 ? ((timings.predicted_n - 1) / timings.predicted_ms) * 1000 : null;

  const scheduledAt = context.scheduledAt ?? null;
  return {
    ttft_ms: ttft,
    ttfr_ms: firstReasoning === undefined ? null : firstReasoning - completion.t0,
    ttfa_ms: firstAnswer === undefined ? null : firstAnswer - completion.t0,
    ...toolCallTimes(completion),
    e2e_ms: e2e,
    tpot_ms: tpot,
    itl_ms: itl,
    output_tokens: outputTokens,
    output_tokens_source: outputSource,
    queue_ms: queue,
    client_overhead_ms: overhead,
    decode_tokens_per_s: decodeRate,
    ttft_from_schedule_ms: scheduledAt === null || first === undefined ? null : first - scheduledAt,
    e2e_from_schedule_ms: scheduledAt === null || e2e === null ? null : e2e + completion.t0 - scheduledAt,
  };
}

/** When the answer's first call began and when its calls were complete (all arguments parsing); absent fields for an answer without calls. */
function toolCallTimes(completion: StreamedCompletion): Partial<RequestMetrics> {
  const times = completion.toolCallChunkTimes ?? [];
  if (times.length === 0) return {};
  const complete = !completion.error && completion.toolCalls.every((call) => callArguments(call.arguments) !== NOT_JSON);
  return { ttfc_ms: times[0]! - completion.t0, tool_call_ms: complete ? times[times.length - 1]! - completion.t0 : null };
}
