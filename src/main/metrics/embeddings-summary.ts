import type { MeasuredRequest } from '../../shared/contract/measurement';
import type { EmbeddingsSummary } from '../../shared/contract/runs';
import { measuredWindowMs, perSecond } from './run-summary';

/**
 * Inputs and input tokens per second of an embeddings run. `successesByItem` counts each item's
 * successful measured requests and `inputsByItem` says how many texts the item sends, so inputs
 * come from what was stored, not from what was planned; the window is the run's measured window.
 */
export function embeddingsSummary(
  rows: readonly MeasuredRequest[],
  successesByItem: ReadonlyMap<string, number>,
  inputsByItem: ReadonlyMap<string, number>,
): EmbeddingsSummary {
  const measured = rows.filter((row) => !row.warmup);
  const successes = measured.filter((row) => row.error_class === null);
  let requests = 0;
  let inputs = 0;
  for (const [item, count] of successesByItem) {
    requests += count;
    inputs += count * (inputsByItem.get(item) ?? 0);
  }
  const counted = successes.filter((row) => row.prompt_tokens !== null);
  const inputTokens = counted.length === 0 ? null : counted.reduce((sum, row) => sum + row.prompt_tokens!, 0);
  const windowMs = measuredWindowMs(measured);
  return {
    requests,
    inputs,
    inputs_per_request_mean: requests === 0 ? null : inputs / requests,
    inputs_per_s: perSecond(inputs, windowMs),
    input_tokens: inputTokens,
    input_tokens_per_s: inputTokens === null ? null : perSecond(inputTokens, windowMs),
  };
}
