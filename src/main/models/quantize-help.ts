import type { QuantTypeInfo } from '../../shared/contract/models';

/**
 * Types llama-quantize refuses to make without an importance matrix (it stops with "Please do
 * not use … without an importance matrix"); Infer Lab does not compute one yet.
 */
export const NEEDS_IMPORTANCE_MATRIX: ReadonlySet<string> = new Set(['IQ1_S', 'IQ1_M', 'IQ2_XXS', 'IQ2_XS', 'IQ2_S', 'Q2_K_S']);

/**
 * The types a llama-quantize build offers, read from its `--help` ("  15  or  Q4_K_M  :  4.58G,
 * +0.1754 ppl @ Llama-3-8B"). Aliases ("Q4_K : alias for Q4_K_M") and COPY (no quantization)
 * are left out; each type appears once, in the build's own order.
 */
export function parseQuantTypes(help: string): QuantTypeInfo[] {
  const types: QuantTypeInfo[] = [];
  for (const line of help.split('\n')) {
    const match = /^\s*\d+\s+or\s+([A-Z0-9_]+)\s*:\s*(.*?)\s*$/.exec(line);
    if (!match || /^alias for /i.test(match[2]!)) continue;
    const type = match[1]!;
    if (types.some((entry) => entry.type === type)) continue;
    types.push({ type, description: match[2]!.replace(/\s+/g, ' '), needsImportanceMatrix: NEEDS_IMPORTANCE_MATRIX.has(type) });
  }
  return types;
}
