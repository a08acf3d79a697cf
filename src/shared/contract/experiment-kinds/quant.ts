import { Type, type Static } from '@sinclair/typebox';
import { Maybe, Name, PathText, Strict } from '../schema-parts';
import { experimentSpec, FIXED_DESIGN_FIELD, KLD_TEXT_FILE_FIELD, type ProtocolBase, type WindowsAndPassProtocol } from './common';

export const QuantSpecSchema = experimentSpec(
  'quant',
  {
    quants: Type.Optional(
      Type.Array(Name, { maxItems: 64, description: 'The types to compare, the first the baseline (f16,q8_0,q4_k_m).' }),
    ),
    files: Maybe(
      Type.Array(Type.Object({ name: Name, path: PathText }, Strict), { maxItems: 64 }),
      'Explicit files instead of model + quants.',
    ),
    kldTextFile: KLD_TEXT_FILE_FIELD,
    fixed: FIXED_DESIGN_FIELD,
  },
  'Quantizations of one model compared in rotated windows, with quality gates and a recommendation.',
);
export type QuantSpec = Static<typeof QuantSpecSchema>;

/** What a quantization experiment records of how it ran. */
export interface QuantProtocol extends ProtocolBase<'quant'>, WindowsAndPassProtocol {
  /** The model the types were made from, or the first named file. */
  base: string;
  /** The types made from base; null when the files were named. */
  quants: string[] | null;
  files: { name: string; file: string }[];
}
