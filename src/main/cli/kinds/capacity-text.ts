import type { KindText } from './kind-text';

/** `inferlab experiment capacity`: its usage lines, help examples and notes. */
export const CAPACITY_TEXT: KindText = {
  overview: {
    synopsis: 'capacity --model MODEL --slo ttft=MS[,tpot=MS] [--percentile 90] [--by rate|concurrency|users]',
    purpose: 'the highest load that meets every SLO at the percentile, with an interval',
  },
  usage: [
    'capacity --model MODEL --slo ttft=MS[,tpot=MS,e2e=MS] [--percentile 90] [--by rate|concurrency|users]',
    '[--workload W] [--requests N (per look)] [--start LOAD] [--max-load LOAD] [--keep-cache]',
  ],

  examples: [
    'inferlab experiment capacity --model demo:q8_0 --slo ttft=500,tpot=50 --percentile 90',
    'inferlab experiment capacity --model m.gguf --slo ttft=500 --percentile 99 --by concurrency --json',
  ],
  notes:
    'Finds the highest load at which every SLO holds at the percentile: brackets (doubling from --start), then bisects. Each load is judged by an exact binomial test on the requests above each limit; all decisions together hold at 95 % confidence, so the reported interval [capacity, lowest miss] covers the true limit. Requests per look default to what the percentile needs (p90: about 90, p99: about 900). Open-loop latencies count from the scheduled time; a load the generator could not deliver is measured again, never counted as a miss. The prompt cache is emptied before each sample unless --keep-cache. --by users counts concurrent users of a conversation workload (multi-turn-chat unless --workload names another): each user gets a server slot, and every turn of their conversations is judged.',
};
