/**
 * The common quantization types, largest first: what the UI offers until the engine's
 * llama-quantize has listed its own (`models.quantTypes`).
 * The CLI takes any type llama-quantize knows.
 */
export const OFFERED_QUANT_TYPES = [
  'Q8_0',
  'Q6_K',
  'Q5_K_M',
  'Q5_K_S',
  'Q5_0',
  'Q4_K_M',
  'Q4_K_S',
  'Q4_0',
  'IQ4_NL',
  'Q3_K_L',
  'Q3_K_M',
  'Q3_K_S',
  'Q2_K',
] as const;

export const DEFAULT_QUANT_TYPE = 'Q4_K_M';
