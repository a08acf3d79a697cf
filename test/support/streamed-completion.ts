import type { StreamedCompletion } from '../../src/main/client/stream-client';

/** A hand-made streamed completion: sent at 1000 ms, headers at 1005, nothing streamed yet; override what a case needs. */
export function handMadeCompletion(overrides: Partial<StreamedCompletion> = {}): StreamedCompletion {
  return {
    t0: 1000,
    headersAt: 1005,
    contentChunkTimes: [],
    contentChunkAnswerChars: [],
    answerChunkTimes: [],
    reasoningChunkTimes: [],
    toolCallChunkTimes: [],
    toolCalls: [],
    finishAt: null,
    endAt: null,
    httpStatus: 200,
    finishReason: 'stop',
    text: '',
    reasoningText: '',
    usage: null,
    timings: null,
    error: null,
    ...overrides,
  };
}
