import type { RequestMetrics } from '../../shared/contract/measurement';
import type { StoredRequest } from '../store/run-store';
import type { StreamedCompletion } from '../client/stream-client';

/**
 * The stored form of one observed completion. Times become offsets: `runStart` for the
 * request's place in the run, the request's own send time for its chunks.
 */
export function storedRequestFrom(
  completion: StreamedCompletion,
  metrics: RequestMetrics,
  context: Pick<StoredRequest, 'seq' | 'warmup' | 'promptText'> &
    Partial<Pick<StoredRequest, 'group' | 'itemId' | 'accepted' | 'acceptance' | 'session' | 'turn'>> & {
      runStart: number;
      scheduledAt?: number | null;
    },
): StoredRequest {
  const { runStart, scheduledAt, ...identity } = context;
  return {
    ...identity,
    scheduledMs: scheduledAt === null || scheduledAt === undefined ? null : scheduledAt - runStart,
    t0Ms: completion.t0 - runStart,
    headersMs: completion.headersAt === null ? null : completion.headersAt - completion.t0,
    endMs: completion.endAt === null ? null : completion.endAt - runStart,
    metrics,
    promptTokens: completion.usage?.prompt_tokens ?? null,
    usage: completion.usage,
    finishReason: completion.finishReason,
    httpStatus: completion.httpStatus,
    errorClass: completion.error?.class ?? null,
    errorMessage: completion.error?.message ?? null,
    timings: completion.timings,
    chunkOffsetsMs: completion.contentChunkTimes.map((time) => time - completion.t0),
    outputText: completion.text,
    reasoningText: completion.reasoningText || null,
    reasoningChunkOffsetsMs: completion.reasoningChunkTimes.map((time) => time - completion.t0),
  };
}
