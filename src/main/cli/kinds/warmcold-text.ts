import type { KindText } from './kind-text';

/** `inferlab experiment warmcold`: its usage lines, help examples and notes. */
export const WARMCOLD_TEXT: KindText = {
  overview: {
    synopsis: 'warmcold --model MODEL [--workload W] [--repeats N] [--requests N] [--json] [--report FILE.html]',
    purpose: 'what a cold process and a cold prompt cache cost against a warm server',
  },
  usage: [
    'warmcold --model MODEL --workload W [--repeats N] [--requests N] [--concurrency N] [--cold-starts N] [--skip-cache-reset] [--fixed]',
  ],
  notes:
    'It looks at the TTFT verdicts halfway through --repeats and stops there once they are decided; --fixed runs every window. The first half of the windows holds the --cold-starts fresh starts a verdict needs; each later window adds its even share of them (at least one).',

  examples: ['inferlab experiment warmcold --model demo:q8_0 --workload prefix-share --report warmcold.html'],
};
