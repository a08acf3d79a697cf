import type { KindText } from './kind-text';

/** `inferlab experiment adapter`: its usage lines, help examples and notes. */
export const ADAPTER_TEXT: KindText = {
  overview: {
    synopsis: 'adapter --model MODEL --adapters FILE[@SCALE],...',
    purpose: 'what does my LoRA fine-tune cost in speed, memory and load time?',
  },
  usage: [
    'adapter --model MODEL --adapters FILE[@SCALE],... (demo:lora for the demo adapter) [--serving own|swapped|both] [--fixed]',
    '[--workload W (chat-short)] [--repeats N] [--requests N] [--concurrency N]',
  ],
  gates: true,
  examples: [
    'inferlab experiment adapter --model demo:q8_0 --adapters demo:lora,demo:lora@0.5',
    'inferlab experiment adapter --model base.gguf --adapters my-finetune.gguf --workload extraction-json --report adapter.html',
    'inferlab experiment adapter --model demo:q8_0 --adapters demo:lora,demo:lora@0.5 --serving both',
  ],
  notes:
    "The base model against each LoRA adapter applied to it (--lora-scaled; FILE@0.5 sets its scale, 1 by default), each on a fresh server of the same profile in rotated windows. Reported per adapter: TTFT/TPOT verdicts against the base model, the memory its weights took (the server's LoRA buffer log lines), the servers' load time, acceptance on the workload, and, untimed, greedy token agreement and KL divergence (llama-perplexity with the adapter) against the base model: how far it moves the answers, which is what it was trained to do, so those two gate only when --min-agreement or --max-kld is given. Each adapter is checked against the model (architecture, tensor shapes) before anything starts. The recommendation is the first adapter by --objective (tpot by default: the lowest TPOT p50; ttft; or memory: the smallest adapter weights) among those that pass the gates (acceptance not significantly below the base model's, the SLO and --vram-budget where given); the base model is the reference, never the choice. It looks at the speed verdicts halfway through --repeats and stops there once none is open (--fixed runs every window). --serving swapped serves every adapter from one server that loads them all, each request choosing its own (llama-server's per-request lora, the others at scale 0), as one process serving several fine-tunes does; --serving both runs each adapter both ways (`NAME swapped` beside `NAME`), with verdicts between the two (`NAME → NAME swapped`): what swapping costs that adapter.",
};
