/**
 * A server profile, the llama-server options a run or an experiment starts with. Its own module,
 * apart from specs.ts, so that the experiment kinds' contracts (experiment-kinds/), which
 * specs.ts gathers, take its type without importing specs.ts back.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Name, Nullable, Strict } from './schema-parts';

export const FlashAttentionSchema = Type.Union([Type.Literal('on'), Type.Literal('off'), Type.Literal('auto')]);
export type FlashAttention = Static<typeof FlashAttentionSchema>;

export const ServerProfileSchema = Type.Object(
  {
    name: Name,
    contextSize: Type.Integer(),
    parallelSlots: Type.Integer(),
    batchSize: Type.Integer(),
    ubatchSize: Type.Integer(),
    gpuLayers: Type.Integer(),
    flashAttention: FlashAttentionSchema,
    cacheTypeK: Name,
    cacheTypeV: Name,
    threads: Type.Integer(),
    cacheRamMib: Type.Integer(),
    cacheReuse: Type.Integer(),
    allowContextOverTrained: Type.Boolean({ description: 'Allow a context larger than the model was trained for.' }),
    draftModel: Nullable(
      Type.String({
        maxLength: 4096,
        description:
          'Speculative decoding: a smaller model with the same vocabulary that drafts tokens (a demo ref or GGUF path); null for none.',
      }),
    ),
    draftMax: Type.Integer({ description: 'Most tokens drafted per step.' }),
    draftMin: Type.Integer({ description: 'Fewest tokens drafted per step.' }),
    draftPMin: Type.Number({ description: 'A draft stops at a token the draft model gives less than this probability.' }),
    draftGpuLayers: Type.Integer({ description: 'Layers of the draft model placed on the GPU.' }),
    loraAdapter: Type.Optional(
      Nullable(
        Type.String({
          maxLength: 4096,
          description: 'A LoRA adapter applied to the model (demo:lora or a GGUF adapter path); null or absent for none.',
        }),
      ),
    ),
    loraScale: Type.Optional(Type.Number({ description: "The adapter's scale: 1 as trained, 0 the base model's output." })),
    projector: Type.Optional(
      Nullable(
        Type.String({
          maxLength: 4096,
          description:
            "The model's image projector (demo:mmproj or an mmproj GGUF path, llama-server's --mmproj); null or absent for none.",
        }),
      ),
    ),
    gpuDevices: Type.Optional(
      Type.String({
        maxLength: 256,
        description: 'The GPUs the server may use: "all", or indexes as nvidia-smi numbers them, e.g. "0,1". Telemetry counts only these.',
      }),
    ),
    extraFlags: Type.Array(Name, { maxItems: 256, description: 'Further flags, as argv items, e.g. ["--mlock"].' }),
  },
  { ...Strict, description: 'A named set of llama-server options. Every field is passed explicitly at launch.' },
);
export type ServerProfile = Static<typeof ServerProfileSchema>;
