import type { KindText } from './kind-text';

/** `inferlab experiment warmcold`: its usage lines, help examples and notes. */
export const WARMCOLD_TEXT: KindText = {
  overview: {
    synopsis: 'warmcold --model MODEL [--workload W] [--repeats N] [--requests N] [--json] [--report FILE.html]',
    purpose: 'what a cold process and a cold prompt cache cost against a warm server',
  },
  usage: ['warmcold --model MODEL --workload W [--repeats N] [--requests N] [--concurrency N] [--cold-starts N] [--skip-cache-reset]'],

  examples: ['inferlab experiment warmcold --model demo:q8_0 --workload prefix-share --report warmcold.html'],
};
