import type { ExperimentResult } from '../../../shared/contract/experiments';
import { CapacityPanel } from './capacity-panel';

/** The capacity found under the SLO, its chart and every load measured. */
export function CapacityResult({ result }: { result: ExperimentResult }) {
  return result.capacity ? <CapacityPanel capacity={result.capacity} /> : null;
}
