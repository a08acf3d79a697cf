import { Type, type Static } from '@sinclair/typebox';
import { Maybe, PathText, Strict } from '../schema-parts';
import { experimentSpec, FIXED_DESIGN_FIELD, KLD_TEXT_FILE_FIELD, type ProtocolBase, type WindowsAndPassProtocol } from './common';

/** The most adapters one experiment compares with its base model. */
export const MAX_ADAPTERS = 8;

export const AdapterSpecSchema = experimentSpec(
  'adapter',
  {
    adapters: Type.Array(
      Type.Object(
        {
          file: Type.String({ ...PathText, description: 'A GGUF LoRA adapter made for the model (demo:lora for the demo one).' }),
          scale: Maybe(Type.Number(), "Its strength: 1 as trained (the default), 0 the base model's answers, from -4 to 4."),
        },
        Strict,
      ),
      { maxItems: MAX_ADAPTERS, description: 'The adapters, each a condition of its own against the base model (the baseline).' },
    ),
    serving: Maybe(
      Type.Union([Type.Literal('own'), Type.Literal('swapped'), Type.Literal('both')]),
      'How each adapter is served: "own", a server of its own (the default); "swapped", one server holding every adapter, each request choosing its own (llama-server\'s per-request lora); "both", each adapter both ways, to see what swapping costs.',
    ),
    kldTextFile: KLD_TEXT_FILE_FIELD,
    fixed: FIXED_DESIGN_FIELD,
  },
  'The base model against LoRA adapters applied to it: what each adapter costs in speed, memory and load time, and how far it moves the answers.',
);
export type AdapterSpec = Static<typeof AdapterSpecSchema>;

/** What an adapter experiment records of how it ran. */
export interface AdapterProtocol extends ProtocolBase<'adapter'>, WindowsAndPassProtocol {
  model: string;
  /** Each condition after the base: its name, the adapter file as given and resolved, and its scale. */
  adapters: { name: string; file: string; path: string; scale: number }[];
  /** How the adapters were served: each on a server of its own, swapped per request on one server holding them all, or both. */
  serving?: AdapterServing;
}

export type AdapterServing = 'own' | 'swapped' | 'both';
