import type { ServerProfile } from './contract/specs';

/** The KV cache types llama-server accepts for -ctk and -ctv. */
export const KV_CACHE_TYPES = ['f32', 'f16', 'bf16', 'q8_0', 'q4_0', 'q4_1', 'iq4_nl', 'q5_0', 'q5_1'] as const;

/**
 * What each server-profile setting means, in one place: the profile editor's labels and help,
 * `inferlab server profile show` and the CLI's --set all read it. The llama-server flag each
 * sets is in parentheses.
 */
export const PROFILE_FIELD_HELP: Record<Exclude<keyof ServerProfile, 'name' | 'extraFlags'>, { label: string; help: string }> = {
  contextSize: { label: 'Context (tokens)', help: 'Total context in tokens, shared by the slots (-c).' },
  parallelSlots: { label: 'Parallel slots', help: 'Requests served at once; each slot gets context / slots (-np).' },
  batchSize: { label: 'Batch (tokens)', help: 'Logical batch: prompt tokens scheduled per step (-b).' },
  ubatchSize: { label: 'Micro-batch (tokens)', help: 'Physical batch per compute call, at most the batch (-ub).' },
  gpuLayers: { label: 'GPU layers', help: 'Layers placed on the GPU: 999 = all, 0 = CPU only (-ngl).' },
  flashAttention: { label: 'Flash attention', help: 'on, off or auto; a quantized V cache needs it on (-fa).' },
  cacheTypeK: { label: 'K cache type', help: 'Lower precision saves VRAM (-ctk).' },
  cacheTypeV: { label: 'V cache type', help: 'Quantized types need flash attention on (-ctv).' },
  threads: { label: 'Threads', help: 'CPU threads for generation (-t).' },
  cacheRamMib: {
    label: 'Prompt cache RAM (MiB)',
    help: 'Host-RAM prompt cache in MiB: 0 disables it (cold-cache runs need 0), -1 no limit (--cache-ram).',
  },
  cacheReuse: { label: 'Cache reuse chunk', help: 'Minimum chunk for KV-shift prompt reuse; 0 disables it (--cache-reuse).' },
  allowContextOverTrained: {
    label: 'Allow context beyond training',
    help: "Permit a per-slot context above the model's trained context (true/false).",
  },
  draftModel: {
    label: 'Draft model',
    help: 'Speculative decoding: a smaller model with the same vocabulary drafts tokens that this one verifies; a demo ref or GGUF path, none to turn it off (-md, --spec-type draft-simple).',
  },
  draftMax: { label: 'Draft tokens, most', help: 'Most tokens drafted per step (--spec-draft-n-max).' },
  draftMin: { label: 'Draft tokens, fewest', help: 'Fewest tokens drafted per step (--spec-draft-n-min).' },
  draftPMin: {
    label: 'Draft probability floor',
    help: 'A draft stops at a token the draft model gives less than this probability, 0 to 1 (--spec-draft-p-min).',
  },
  draftGpuLayers: { label: 'Draft GPU layers', help: 'Layers of the draft model on the GPU: 999 = all (-ngld).' },
  loraAdapter: {
    label: 'LoRA adapter',
    help: 'A GGUF LoRA adapter made for this model (demo:lora for the demo one), or several as FILE,FILE@SCALE, each request picking one by its place; none for the base model (--lora, --lora-scaled).',
  },
  loraScale: {
    label: 'LoRA scale',
    help: "The adapter's strength: 1 as trained, 0 the base model's answers, from -4 to 4 (--lora-scaled).",
  },
  projector: {
    label: 'Image projector',
    help: "The model's image projector: the mmproj-*.gguf beside its weights (demo:mmproj for the demo models); none for text only (--mmproj).",
  },
  gpuDevices: {
    label: 'GPUs',
    help: 'all, or GPU indexes as nvidia-smi numbers them (0,1); telemetry, VRAM and bandwidth then count only these (CUDA_VISIBLE_DEVICES).',
  },
};
