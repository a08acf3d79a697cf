import type { KindText } from './kind-text';

/** `inferlab experiment quant`: its usage lines, help examples and notes. */
export const QUANT_TEXT: KindText = {
  overview: {
    synopsis: 'quant --model BASE --quants f16,q8_0,q4_k_m [--workload W] [--repeats N] [--vram-budget MIB] [--min-agreement F]',
    purpose: 'which quantization to run: speed, memory and quality gates, one recommendation',
  },
  usage: [
    'quant --model BASE --quants f16,q8_0,q4_k_m --workload W [--repeats N] [--requests N] [--fixed]',
    'quant --files NAME=PATH,NAME=PATH,... (the first is the baseline) --workload W ...',
    'quant --from hf:OWNER/REPO[@REV] --quants Q8_0,Q4_K_M,...|all (planned, pulled, the first the baseline) --workload W ...',
  ],
  gates: true,
  calls: ['experiments.start', 'experiments.report', 'models.plan', 'models.pull'],

  examples: [
    'inferlab experiment quant --model demo:f16 --quants f16,q8_0,q4_k_m --workload chat-short',
    'inferlab experiment quant --from hf:Qwen/Qwen3-8B-GGUF --quants Q8_0,Q4_K_M,Q3_K_M --workload chat-short',
  ],
  notes:
    'It looks at the speed verdicts halfway through --repeats and stops there once none the recommendation needs is open; --fixed runs every window. ' +
    "--from plans the named quantizations against this machine at the profile's context, slots and KV type (as models plan does), leaves out any that cannot run here and says why, pulls the rest into the Hugging Face cache (as models pull does: SHA-256 checked, resumable) and compares them, the first named as the baseline.",
};
