/**
 * Every command's usage line: kept apart from the commands themselves so that help and the
 * command table load without loading any command (a command's code is imported only to run it).
 */
import { usageLinesOf } from './kinds/kind-text';
import { GATE_KINDS, KIND_TEXT_ENTRIES, kindsInWords } from './kinds/registry';
import type { ExperimentKind } from '../../shared/contract';

export const DEMO_USAGE =
  'inferlab demo [--repeats N] [--requests N (per window)] [--fixed] | --quick [--model MODEL] [--max-tokens N] | --capacity [--percentile 90]\n' +
  '    [--profile NAME] [--set FIELD=VALUE ...] [--out DIR] [--db PATH] [--json]';

export const DOCTOR_USAGE = 'inferlab doctor [--json] [--db PATH]';

/** The flags of the kinds whose recommendation passes gates (their text says `gates`). */
const GATE_FLAGS = [
  `  ${kindsInWords(GATE_KINDS)}: [--vram-budget MIB] [--min-agreement F|off] [--max-kld NATS|off] [--acceptance-alpha A|off] [--min-acceptance F]`,
  '    [--slo ttft=MS] [--objective memory|tpot|ttft] [--kld-text FILE]',
];
const COMMON_EXPERIMENT_FLAGS =
  'common: [--max-answer-tokens N] [--cooldown S] [--profile NAME] [--set FIELD=VALUE ...] [--report FILE.html] [--db PATH] [--json]';

/** One kind's usage: its own lines, the gate flags where it has gates, then the flags every kind shares. */
export function experimentUsageOf(kind: ExperimentKind): string {
  const text = KIND_TEXT_ENTRIES.find(([entry]) => entry === kind)![1];
  return [...usageLinesOf(text), ...(text.gates ? GATE_FLAGS : []), COMMON_EXPERIMENT_FLAGS].join('\n       ');
}

/** Every kind's usage lines from its own text (cli/kinds/), then the flags kinds share. */
export const EXPERIMENT_USAGE = [
  ...KIND_TEXT_ENTRIES.flatMap(([, text]) => usageLinesOf(text)),
  ...GATE_FLAGS,
  COMMON_EXPERIMENT_FLAGS,
].join('\n       ');

export const CHECK_USAGE = `inferlab check --baseline RUN_OR_EXPERIMENT [--condition NAME] [--metrics tpot_ms:p50,ttft_ms:p95,output_tokens_per_s] [--margin 5%]
    [--repeats N] [--set FIELD=VALUE ...] [--engine PATH] [--interleave] | [--run ID[,ID...]]   [--db PATH] [--json]
    exit 0: pass, 1: a regression beyond the margin, 2: cannot be judged (another model file or workload, too few windows)`;

export const REPORT_USAGE = 'inferlab report EXPERIMENT_ID --out FILE.html [--db PATH]';

export const DECIDE_USAGE =
  'inferlab decide EXPERIMENT_ID --choose CONDITION --reason TEXT [--by NAME] [--db PATH] [--json] | inferlab decisions [--json]';

export const SCAN_USAGE = 'inferlab models scan [DIR|FILE ...] [--hash] [--db PATH] [--json]';

export const PLAN_USAGE =
  'inferlab models plan (hf:OWNER/REPO[@REVISION] | FILE | DIR) [--quants Q4_K_M,Q8_0|all] [--ctx N] [--parallel N] [--kv f16|q8_0|q4_0] [--no-flash-attn]\n' +
  '    [--for MODEL (check LoRA adapters against it)] [--json]';

export const SEARCH_USAGE = 'inferlab models search WORDS... [--json]';

export const PULL_USAGE = 'inferlab models pull hf:OWNER/REPO[@REVISION] [--quants Q4_K_M,Q8_0|all] [--json]';

export const QUANTIZE_USAGE = 'inferlab models quantize SRC --to Q8_0,Q4_K_M [--out DIR] [--json]';

export const RUN_USAGE = `inferlab run (--workload FILE|NAME | --trace FILE.jsonl [--trace-speed X] [--trace-window START:END] [--block-tokens N])
    (--model MODEL | --endpoint URL)
    [--concurrency N | --rate R [--burstiness B] [--max-outstanding N] [--shards N]] [--requests N | --duration S] [--warmup N]
    [--ramp-up S [--ramp linear|exponential]] [--slo ttft=MS,tpot=MS,e2e=MS] [--first-token-timeout S] [--timeout S] [--reference RUN_ID]
    [--profile NAME] [--set FIELD=VALUE ...] [--force] [--api-key-env VAR] [--metrics-url URL] [--gpu-metrics-url URL] [--private] [--db PATH] [--json]`;

export const EXPERIMENTS_USAGE =
  'inferlab experiments list [--limit N] [--json] [--db PATH] | inferlab experiments show ID [--json] [--db PATH]';

export const RUNS_USAGE =
  'inferlab runs list [--limit N] [--json] [--db PATH] | inferlab runs show ID [--json] [--db PATH] | inferlab runs delete ID [--db PATH]';

export const RACE_USAGE =
  'inferlab race RUN[:SEQ] RUN[:SEQ] [RUN[:SEQ] RUN[:SEQ]] | --experiment ID | --model MODEL --model MODEL [--model ...] [--prompt TEXT | --item WORKLOAD#ID] [--max-tokens N]\n' +
  '    [--together] [--profile NAME] [--set FIELD=VALUE ...] [--lane-set N:FIELD=VALUE ...] [--speed X] [--html FILE] [--db PATH] [--json]';
export const COMPARE_USAGE = 'inferlab compare RUN_ID RUN_ID ... (the first is the baseline) [--db PATH] [--json]';

export const HISTORY_USAGE =
  'inferlab history --metric tpot_ms:p50 [--model MODEL_OR_SHA256] [--workload NAME_OR_REVISION] [--key KEY] [--db PATH] [--json]';

export const EXPORT_USAGE =
  'inferlab export ID --out DIR [--db PATH]  (manifest.json, summary.json, requests.jsonl, requests.csv, telemetry.json, telemetry.csv, and trace.jsonl when the prompts were hashed)\n       inferlab export ID|--all|--experiment ID --format parquet --out DIR [--db PATH] [--json]  (runs, requests, chunks, telemetry, experiments, conditions, verdicts, decisions as .parquet)';

export const IMPORT_USAGE =
  'inferlab import DIR [--db PATH] [--json]  (a folder written by inferlab export: the run comes back under its own id)';

export const SERVE_USAGE =
  'inferlab serve [--host 127.0.0.1] [--port N] [--db PATH]  (--window: for the desktop app, with INFERLAB_WINDOW_TOKEN; ends when stdin closes)';

export const START_USAGE =
  'inferlab server start --model MODEL [--engine llama.cpp|vllm|sglang] [--profile NAME] [--set FIELD=VALUE ...] [--force] [--db PATH] [--json]';

export const PROFILE_USAGE =
  'inferlab server profile list [--json] | show NAME | save NAME [--from NAME] [--set FIELD=VALUE ...] | delete NAME';

export const EXPLAIN_USAGE =
  'inferlab server explain LOG|- [--json]  (a llama-server or llama.cpp log from any build: facts, where the weights went, warnings)';

export const SETUP_USAGE = 'inferlab setup [--force] [--backend cpu|cuda|vulkan|metal] [--from-source]';

export const COMPLETION_USAGE = 'inferlab completion bash|zsh  (prints a completion script: source <(inferlab completion bash))';
