import type { StreamedCompletion } from '../client/stream-client';
import type { ResolvedItem } from '../workload/workload-types';

/**
 * Sends one request of a run and stores it: what streamed back, or null when it was never sent
 * (the run halted first). `place` numbers a request of a multi-request send (a conversation's
 * turn, an agent exchange's step) within its send.
 */
export type SendOne = (
  item: ResolvedItem,
  request: { path: string; body: Record<string, unknown> },
  warmup: boolean,
  scheduledAt: number | null,
  place: { session: number; turn: number } | null,
) => Promise<StreamedCompletion | null>;
