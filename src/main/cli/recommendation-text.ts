import type { ExperimentResult } from '../../shared/contract/experiments';

/**
 * The recommendation as the terminal shows it: the choice and its reason (or "none" where nothing
 * was chosen, as for warm against cold, which compares and chooses nothing), then one line per
 * condition set aside, under the word the kind uses for it.
 */
export function recommendationText(recommendation: ExperimentResult['recommendation'], setAside: 'excluded' | 'not chosen'): string {
  const head = `recommendation: ${recommendation.choice ?? 'none'}: ${recommendation.reason}`;
  return [head, ...recommendation.excluded.map((item) => `  ${setAside} ${item.name}: ${item.reason}`)].join('\n');
}
