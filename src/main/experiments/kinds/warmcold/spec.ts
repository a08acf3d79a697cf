import type { StartExperimentSpec } from '../../../../shared/contract';
import { wholeNumber } from '../../spec-checks';

export function checkWarmColdShape(spec: StartExperimentSpec): void {
  wholeNumber('coldStarts', spec.coldStarts, 1, 1000);
}
