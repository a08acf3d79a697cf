import type { KindText } from './kind-text';

/** `inferlab experiment speculative`: its usage lines, help examples and notes. */
export const SPECULATIVE_TEXT: KindText = {
  overview: {
    synopsis: 'speculative --model MODEL --draft DRAFT [--draft-max 4,8,16]',
    purpose: 'does a draft model speed it up, output unchanged?',
  },
  usage: [
    'speculative --model MODEL --draft DRAFT_MODEL [--draft-max 4,8,16] [--workload W] [--repeats N] [--requests N] [--concurrency N] [--fixed]',
  ],

  examples: [
    'inferlab experiment speculative --model demo:f16 --draft demo:q4_k_m --draft-max 4,8,16',
    'inferlab experiment speculative --model big.gguf --draft small.gguf --concurrency 1 --report spec.html',
  ],
  notes:
    'Does a draft model speed up this workload without changing its output? Spec off and each draft limit (--draft-max, tokens drafted per step; default 4,8,16) run in rotated windows on fresh servers, with TPOT and throughput verdicts against spec off, and the acceptance rate (accepted of drafted tokens, from the server) per setting. Then untimed greedy passes (temperature 0, one request at a time) compare each draft setting with spec off token for token; spec off runs twice, and only a mismatch where spec off agreed with itself counts. A draft setting is recommended only when it is shown faster and its output is unchanged. It looks at the speed verdicts (TTFT, TPOT) halfway through --repeats and stops there once none the recommendation needs is open (--fixed runs every window). The draft needs the same vocabulary as --model; its settings are profile fields (draftModel, draftMax, draftMin, draftPMin, draftGpuLayers) that inferlab run --set also takes.',
};
