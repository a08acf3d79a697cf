import type { ConditionResult } from '../../../shared/contract/experiments';
import { num, pct } from '../components/format';
import type { KindColumns } from './result-parts';

export const SWEEP_COLUMNS: KindColumns = {
  Headers: () => (
    <>
      <th>Goodput</th>
      <th title="Good: succeeded, passed acceptance and met every SLO">Good requests</th>
      <th>Pareto</th>
    </>
  ),
  Cells: ({ condition }: { condition: ConditionResult }) => (
    <>
      <td>{num(condition.goodput_requests_per_s ?? null, 'req/s', 2)}</td>
      <td className={condition.meets_slo === false ? 'error' : undefined}>
        {condition.meets_slo == null ? '— (no SLO)' : pct(condition.goodput_fraction ?? null)}
      </td>
      <td>{condition.pareto ? 'yes' : 'no'}</td>
    </>
  ),
};
