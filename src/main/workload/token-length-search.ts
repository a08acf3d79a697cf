/**
 * The most words of a pool whose text stays within a token budget, asking the tokenizer as
 * few times as it can. Each question is a round trip to the server's /tokenize with the whole
 * text, and a workload asks hundreds of them, so a bisection's eleven or so per prompt were
 * most of the time a run took to start.
 *
 * Token counts grow with the number of words at a nearly steady rate (random words of one
 * vocabulary), so the search steers by the tokens per word it has seen, starting from one, and
 * bisects once after three steps in a row that each left more than half of what was left, so
 * counts that are not steady still take a bounded number of questions. Short texts are also the
 * cheap ones to count, so it never asks for the whole pool unless the answer is near it. For
 * counts that never fall as words are added, the answer is a bisection's: the largest n in
 * [0, poolSize] with count(n) ≤ budget, or 0 when none is.
 */
export async function mostWordsWithin(
  budget: number,
  poolSize: number,
  countOf: (words: number) => Promise<number>,
  countOfNone: number,
): Promise<{ words: number; tokens: number }> {
  let low = 0;
  let lowCount = countOfNone;
  // high is the first count known to be over the budget; poolSize + 1 stands for "none known yet".
  let high = poolSize + 1;
  let highCount = Number.POSITIVE_INFINITY;
  let bisectNext = false;
  let slowSteps = 0;
  while (high - low > 1) {
    const width = high - low;
    const guess = bisectNext ? Math.ceil((low + high) / 2) : steered(low, lowCount, high, highCount, budget, countOfNone);
    const count = await countOf(guess);
    if (count <= budget) {
      low = guess;
      lowCount = count;
    } else {
      high = guess;
      highCount = count;
    }
    slowSteps = high - low > width / 2 ? slowSteps + 1 : 0;
    bisectNext = !bisectNext && slowSteps >= 3;
  }
  return { words: low, tokens: lowCount };
}

/** The next word count to ask about: where the budget falls at the tokens per word seen so far, strictly inside the bracket. */
function steered(low: number, lowCount: number, high: number, highCount: number, budget: number, countOfNone: number): number {
  const perWord = Number.isFinite(highCount)
    ? (highCount - lowCount) / (high - low)
    : low > 0 && lowCount > countOfNone
      ? (lowCount - countOfNone) / low
      : 1;
  const estimate = perWord > 0 ? low + Math.floor((budget - lowCount) / perWord) : low + 1;
  return Math.min(high - 1, Math.max(low + 1, estimate));
}
