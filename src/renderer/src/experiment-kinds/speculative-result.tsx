import type { ConditionResult, ExperimentResult } from '../../../shared/contract/experiments';
import { pct } from '../components/format';
import type { KindColumns } from './result-parts';

/** A condition's greedy-output check: spec off is the reference itself. */
function greedyCell(equivalence: ExperimentResult['greedy_equivalence'], name: string): string {
  if (!equivalence) return '—';
  const setting = equivalence.settings.find((entry) => entry.name === name);
  if (!setting) return 'reference';
  return setting.equivalent ? 'identical' : `differs on ${setting.beyond_floor.length} item(s)`;
}

/** Whether each draft setting kept spec off's greedy output, beyond spec off's own noise floor. */
export function SpeculativeResult({ result }: { result: ExperimentResult }) {
  const equivalence = result.greedy_equivalence;
  if (!equivalence) return null;
  return (
    <p data-testid="greedy-equivalence">
      Greedy output over {equivalence.items} items: spec off agreed with itself on {equivalence.items - equivalence.floor_mismatches.length}{' '}
      (noise floor, exact match {pct(equivalence.noise_floor.exact_match_rate)}
      ).{' '}
      {equivalence.settings.map((setting) => (
        <span key={setting.name} className={setting.equivalent ? undefined : 'error'}>
          {setting.name}: {setting.equivalent ? 'identical' : `differs on ${setting.beyond_floor.join(', ')}`} (exact match{' '}
          {pct(setting.agreement.exact_match_rate)}).{' '}
        </span>
      ))}
      <br />
      <small>{equivalence.rule}</small>
    </p>
  );
}

export const SPECULATIVE_COLUMNS: KindColumns = {
  Headers: () => (
    <>
      <th title="Accepted of drafted tokens, pooled over the windows">Draft acceptance</th>
      <th>Per request, min</th>
      <th>Greedy output</th>
    </>
  ),
  Cells: ({ condition, result }: { condition: ConditionResult; result: ExperimentResult }) => (
    <>
      <td>{condition.speculative ? pct(condition.speculative.acceptance_rate) : '— (no draft)'}</td>
      <td>{condition.speculative ? pct(condition.speculative.acceptance_rate_per_request.min) : '—'}</td>
      <td>{greedyCell(result.greedy_equivalence, condition.name)}</td>
    </>
  ),
};
