import type { BunchedDelivery } from '../../shared/contract/runs';
import type { MeasuredRequest } from '../../shared/contract/measurement';

/**
 * A request's tokens are "bunched" when the client received them much faster than the server
 * made them. That happens when the server's HTTP thread or the client gets no CPU while the
 * decode threads hold every core, or when a proxy buffers the stream: the tokens then arrive
 * together, TTFT holds decode steps and TPOT measures delivery, not decoding (docs/METRICS.md).
 */
export const BUNCHED_STEP_SHARE = 0.5;
/** Without the server's own decode time: a per-token pace no server decodes one sequence at (10,000 tokens/s). */
export const BUNCHED_TPOT_FLOOR_MS = 0.1;

/** True when the request's tokens came bunched, false when streamed, null when it cannot tell (failed, or under three tokens). */
export function cameBunched(
  row: Pick<MeasuredRequest, 'error_class' | 'tpot_ms' | 'output_tokens' | 'decode_tokens_per_s'>,
): boolean | null {
  if (row.error_class !== null || row.tpot_ms === null || (row.output_tokens ?? 0) < 3) return null;
  const serverStepMs = row.decode_tokens_per_s ? 1000 / row.decode_tokens_per_s : null;
  return serverStepMs !== null ? row.tpot_ms < BUNCHED_STEP_SHARE * serverStepMs : row.tpot_ms < BUNCHED_TPOT_FLOOR_MS;
}

export function bunchedDelivery(measured: readonly MeasuredRequest[]): BunchedDelivery {
  const judged = measured.map(cameBunched).filter((verdict): verdict is boolean => verdict !== null);
  const bunched = judged.filter(Boolean).length;
  return {
    judged_requests: judged.length,
    bunched_requests: bunched,
    warning:
      bunched === 0
        ? null
        : `BUNCHED TOKENS: ${bunched} of ${judged.length} requests received their tokens much faster than the server decoded them (client TPOT under half the server's own decode step, or under ${BUNCHED_TPOT_FLOOR_MS} ms where the server reports none): for those, TTFT holds decode steps and TPOT measures delivery, not decoding. The server's HTTP thread or this client was short of CPU (server threads on every core?) or a proxy buffered the stream: leave a core free (--set threads=N) or turn the buffering off`,
  };
}
