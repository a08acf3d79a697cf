import type { RequestRow } from '../store/run-store';

/**
 * Greedy agreement between a candidate's outputs and the baseline's: requests paired by
 * item and occurrence; the fraction whose outputs are identical, and for the others the
 * mean character position of the first difference.
 */
export function greedyAgreement(baseline: RequestRow[], candidate: RequestRow[]): { agreement: number | null; firstDivergenceMean: number | null; pairs: number } {
  const key = (rows: RequestRow[]) => {
    const seen = new Map<string, number>();
    const byKey = new Map<string, string>();
    for (const row of rows) {
      if (row.warmup !== 0 || row.error_class !== null || row.output_text === null || row.item_id === null) continue;
      const occurrence = seen.get(row.item_id) ?? 0;
      seen.set(row.item_id, occurrence + 1);
      byKey.set(`${row.item_id}#${occurrence}`, row.output_text);
    }
    return byKey;
  };
  const base = key(baseline);
  const other = key(candidate);
  let pairs = 0;
  let same = 0;
  const divergences: number[] = [];
  for (const [pairKey, text] of base) {
    const candidateText = other.get(pairKey);
    if (candidateText === undefined) continue;
    pairs += 1;
    if (candidateText === text) {
      same += 1;
      continue;
    }
    let position = 0;
    while (position < text.length && position < candidateText.length && text[position] === candidateText[position]) position += 1;
    divergences.push(position);
  }
  return {
    agreement: pairs === 0 ? null : same / pairs,
    firstDivergenceMean: divergences.length === 0 ? null : divergences.reduce((a, b) => a + b, 0) / divergences.length,
    pairs,
  };
}
