import type { ComponentType } from 'react';
import type { ConditionResult, ExperimentResult } from '../../../shared/contract/experiments';

/** The columns a kind adds to the shared condition table: its header cells, and its cells for one condition. */
export interface KindColumns {
  Headers: ComponentType;
  Cells: ComponentType<{ condition: ConditionResult; result: ExperimentResult }>;
}
