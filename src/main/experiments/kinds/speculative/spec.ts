import type { SpeculativeSpec } from '../../../../shared/contract/experiment-kinds/speculative';
import { invalidSpec, wholeNumber } from '../../spec-checks';

/** The draft limits compared when the spec names none. */
export const DEFAULT_DRAFT_MAX = [4, 8, 16];

export function checkDraftShape(spec: SpeculativeSpec): void {
  if (typeof spec.draftModel !== 'string' || spec.draftModel.trim() === '')
    invalidSpec('a spec experiment needs a draft model: --draft demo:q4_k_m or a GGUF path with the same vocabulary as --model');
  const limits = spec.draftMax ?? DEFAULT_DRAFT_MAX;
  if (!Array.isArray(limits) || limits.length === 0) invalidSpec('draftMax needs at least one limit, like 4,8,16');
  for (const limit of limits) wholeNumber('draftMax', limit, 1, 256);
  if (new Set(limits).size !== limits.length) invalidSpec(`draftMax lists a limit twice: ${limits.join(',')}`);
}
