import type { QuantSpec } from '../../../../shared/contract/experiment-kinds/quant';
import { invalidSpec } from '../../spec-checks';

/** A quant spec names two or more types to make from its model, unless it names its files. */
export function checkQuantShape(spec: QuantSpec): void {
  if (Array.isArray(spec.files) && spec.files.length > 0) return;
  if (
    !Array.isArray(spec.quants) ||
    spec.quants.length < 2 ||
    spec.quants.some((quant) => typeof quant !== 'string' || !/^[a-z0-9_]+$/i.test(quant))
  )
    invalidSpec(`quants needs two or more types like f16,q8_0,q4_k_m, got ${JSON.stringify(spec.quants)}`);
}

/** The types a quant spec names, as llama-quantize and the file names spell them. */
export const quantNames = (spec: QuantSpec): string[] => (spec.quants ?? []).map((quant) => quant.trim().toLowerCase());
