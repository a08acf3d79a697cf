import type { KindText } from './kind-text';

/** `inferlab experiment sweep`: its usage lines, help examples and notes. */
export const SWEEP_TEXT: KindText = {
  overview: {
    synopsis: 'sweep --model MODEL --vary FIELD=V1,V2 [--load concurrency=1,4,16] [--slo ttft=MS]',
    purpose: 'one server setting, or the embeddings batch, at several values, at each load level',
  },
  usage: [
    'sweep --model MODEL --vary FIELD=V1,V2,... [--load concurrency=1,4,16] [--workload W] [--repeats N] [--requests N] [--slo ttft=MS,...] [--fixed]',
  ],

  examples: [
    'inferlab experiment sweep --model demo:q8_0 --vary parallelSlots=1,4 --load concurrency=1,4',
    'inferlab experiment sweep --model demo:q8_0 --vary inputs_per_request=1,4,16',
  ],
  notes:
    'FIELD is a profile field (each value a server setting), or inputs_per_request: each value the number of texts per embeddings request, on one server setting, over the embeddings generators of the workload (the built-in embeddings unless --workload says otherwise; its written items are left out). An embeddings sweep compares latency per request (E2E) and inputs/s, and its Pareto set trades inputs/s against latency (E2E) p95. It looks at the verdicts halfway through --repeats and stops there once every one is decided at every load level (--fixed runs every window); its answer, goodput and the Pareto set, is read from the windows run.',
};
