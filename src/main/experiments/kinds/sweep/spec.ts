import type { SweepSpec } from '../../../../shared/contract/experiment-kinds/sweep';
import { invalidSpec, wholeNumber } from '../../spec-checks';

/** A sweep names one profile field with two or more values, and optionally the load levels to run each at. */
export function checkSweepShape(spec: SweepSpec): void {
  const vary = spec.vary;
  if (!vary || typeof vary.field !== 'string' || !Array.isArray(vary.values) || vary.values.length < 2)
    invalidSpec('a sweep needs vary: a profile field and at least two values');
  for (const level of spec.loadConcurrencies ?? []) wholeNumber('load concurrency', level, 1, 4096);
}
