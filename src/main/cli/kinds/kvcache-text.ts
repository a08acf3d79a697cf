import type { KindText } from './kind-text';

/** `inferlab experiment kvcache`: its usage lines, help examples and notes. */
export const KVCACHE_TEXT: KindText = {
  overview: {
    synopsis: 'kvcache --model MODEL [--types f16,q8_0,q4_0] [--ctx N]',
    purpose: 'does a smaller KV cache type miss details in long documents?',
  },
  usage: [
    'kvcache --model MODEL [--types f16,q8_0,q4_0 (K and V alike; K/V apart: q8_0/f16)] [--ctx N] [--fixed]',
    '[--workload W (long-context)] [--repeats N] [--requests N] [--concurrency N]',
  ],
  gates: true,

  examples: [
    'inferlab experiment kvcache --model demo:q8_0 --types f16,q8_0,q4_0',
    'inferlab experiment kvcache --model m.gguf --types f16,q8_0/f16,q8_0 --ctx 32768 --workload long-context --report kv.html',
  ],
  notes:
    'This cache type saves memory; does the model start missing details in long documents? Each KV cache type (-ctk/-ctv; q8_0 sets both, q8_0/f16 sets K and V apart; the first is the baseline) runs on a fresh server in rotated windows, by default on long-context, documents whose decisive fact sits near the end, each answer checked for it. Reported per type: the KV memory the server allocated (its KV buffer log lines, summed over devices), TTFT/TPOT verdicts against the baseline, acceptance per workload group, and, untimed, greedy token agreement and KL divergence (llama-perplexity with the same cache) against the baseline. A quantized V cache needs flash attention: every type then runs with it on, the baseline too. The gates and the recommendation are those of experiment quant, with memory compared on the KV cache; like it, it looks at the speed verdicts halfway through --repeats and stops there once none the recommendation needs is open (--fixed runs every window).',
};
