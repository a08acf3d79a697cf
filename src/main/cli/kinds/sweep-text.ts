import type { KindText } from './kind-text';

/** `inferlab experiment sweep`: its usage lines, help examples and notes. */
export const SWEEP_TEXT: KindText = {
  overview: {
    synopsis: 'sweep --model MODEL --vary FIELD=V1,V2 [--load concurrency=1,4,16] [--slo ttft=MS]',
    purpose: 'one server setting at several values, at each load level',
  },
  usage: [
    'sweep --model MODEL --vary FIELD=V1,V2,... [--load concurrency=1,4,16] [--workload W] [--repeats N] [--requests N] [--slo ttft=MS,...]',
  ],

  examples: ['inferlab experiment sweep --model demo:q8_0 --vary parallelSlots=1,4 --load concurrency=1,4'],
};
