import type { WarmColdSpec } from '../../../../shared/contract/experiment-kinds/warmcold';
import { wholeNumber } from '../../spec-checks';

export function checkWarmColdShape(spec: WarmColdSpec): void {
  wholeNumber('coldStarts', spec.coldStarts, 1, 1000);
}
