/**
 * Edits between two words (insert, delete, replace, or swap two neighbours): a typed name is
 * usually one or two away from the one meant ("chat-shrt", "--concurency", "warmcodl").
 */
export function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = best;
    }
  return rows[a.length]![b.length]!;
}

/**
 * The one name a mistyped one most likely meant: the nearest within a quarter of its length (at
 * least one edit, at most three), and only when no other name is as near. Null when none is near
 * enough, or when the input is one of the names (nothing to correct). Case is ignored.
 */
export function closestName(input: string, names: readonly string[]): string | null {
  const typed = input.toLowerCase();
  // Longer than any name could plausibly be mistyped from: not worth the table.
  if (typed.length > 200) return null;
  const limit = Math.min(3, Math.max(1, Math.floor(typed.length / 4)));
  let best: string | null = null;
  let bestDistance = Infinity;
  let tied = false;
  for (const name of names) {
    const distance = editDistance(typed, name.toLowerCase());
    if (distance === 0) return null;
    if (distance < bestDistance) {
      [best, bestDistance, tied] = [name, distance, false];
    } else if (distance === bestDistance) tied = true;
  }
  return best !== null && bestDistance <= limit && !tied ? best : null;
}

/** "; did you mean X?" for an error message, or nothing. */
export function didYouMean(input: string, names: readonly string[], shown: (name: string) => string = (name) => name): string {
  const near = closestName(input, names);
  return near === null ? '' : `; did you mean ${shown(near)}?`;
}
