import type { TokenAgreement } from '../../shared/contract/experiments';

/** Index of the first position where the two sequences differ; the shorter length when one is a prefix of the other. */
export function firstDivergence(baseline: readonly number[], candidate: readonly number[]): number {
  const limit = Math.min(baseline.length, candidate.length);
  let index = 0;
  while (index < limit && baseline[index] === candidate[index]) index += 1;
  return index;
}

/**
 * Greedy token agreement with the baseline, per item paired by id: the share of the
 * baseline's output tokens the candidate reproduces before its first divergence (1 for an
 * identical sequence; a candidate that runs on past the baseline's end still reproduced all
 * of it, but is no exact match), averaged over items; plus the exact-match rate and the
 * mean first-divergence index over the items that diverge. Items missing on either side are
 * left out, and counted in `items` only when both sides have them.
 */
export function tokenAgreement(
  baseline: ReadonlyMap<string, readonly number[]>,
  candidate: ReadonlyMap<string, readonly number[]>,
): TokenAgreement {
  const shares: number[] = [];
  const divergences: number[] = [];
  let exact = 0;
  for (const [id, reference] of baseline) {
    const tokens = candidate.get(id);
    if (tokens === undefined) continue;
    const index = firstDivergence(reference, tokens);
    const identical = index === reference.length && index === tokens.length;
    if (identical) exact += 1;
    else divergences.push(index);
    // An empty baseline output has no tokens to reproduce: only an empty candidate matches it.
    shares.push(reference.length === 0 ? (tokens.length === 0 ? 1 : 0) : index / reference.length);
  }
  const mean = (values: number[]) => (values.length === 0 ? null : values.reduce((sum, value) => sum + value, 0) / values.length);
  return {
    mean: mean(shares),
    exact_match_rate: shares.length === 0 ? null : exact / shares.length,
    first_divergence_index_mean: mean(divergences),
    items: shares.length,
    error: shares.length === 0 ? 'no items with tokens on both sides' : null,
  };
}
