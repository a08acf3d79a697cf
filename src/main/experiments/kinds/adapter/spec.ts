import type { AdapterSpec } from '../../../../shared/contract/experiment-kinds/adapter';
import { ErrorCode } from '../../../../shared/errors';
import { AppError } from '../../../core/errors';
import { adapterConditions, type AdapterCondition } from './conditions';

/** The conditions an adapter spec names, the base model first; a spec that names bad ones is refused. */
export function adapterConditionsOf(spec: AdapterSpec): AdapterCondition[] {
  if (!Array.isArray(spec.adapters))
    throw new AppError(ErrorCode.InvalidInput, 'adapters must be a list: [{ file: "demo:lora", scale: 1 }]');
  if (spec.serving != null && !['own', 'swapped', 'both'].includes(spec.serving))
    throw new AppError(ErrorCode.InvalidInput, `serving must be own, swapped or both, got ${JSON.stringify(spec.serving)}`);
  const checked = adapterConditions(spec.adapters, spec.serving ?? 'own');
  if ('problem' in checked) throw new AppError(ErrorCode.InvalidInput, `adapters: ${checked.problem}`);
  return checked.conditions;
}

/** What an adapter spec must hold before anything is read or started. */
export function checkAdapterShape(spec: AdapterSpec): void {
  adapterConditionsOf(spec);
}
