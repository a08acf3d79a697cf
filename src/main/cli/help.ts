import { EXPERIMENT_DEFAULTS } from '../../shared/experiment-defaults';
import { allowedExtraFlags } from '../engines/llamacpp/extra-flags';
import { KIND_TEXT_ENTRIES } from './kinds/registry';
import {
  DECIDE_USAGE,
  DEMO_USAGE,
  DOCTOR_USAGE,
  EXPERIMENT_USAGE,
  experimentUsageOf,
  EXPORT_USAGE,
  IMPORT_USAGE,
  PROFILE_USAGE,
  QUANTIZE_USAGE,
  PULL_USAGE,
  SEARCH_USAGE,
  REPORT_USAGE,
  CHECK_USAGE,
  RUN_USAGE,
  RUNS_USAGE,
  EXPERIMENTS_USAGE,
  SCAN_USAGE,
  PLAN_USAGE,
  SERVE_USAGE,
  SETUP_USAGE,
  START_USAGE,
  EXPLAIN_USAGE,
  COMPLETION_USAGE,
  COMPARE_USAGE,
  RACE_USAGE,
  HISTORY_USAGE,
} from './usage';

interface HelpEntry {
  usage: string;
  examples?: string[];
  notes?: string;
}

/** The extra llama-server flags a profile may carry, wrapped for a terminal. */
function extraFlagsNote(): string {
  const lines: string[] = [];
  let line = '';
  for (const flag of allowedExtraFlags()) {
    if (line.length + flag.length > 88) {
      lines.push(line.trimEnd());
      line = '';
    }
    line += `${flag} `;
  }
  lines.push(line.trimEnd());
  return `Extra llama-server flags (--set extraFlags="...") are limited to tuning flags with typed values:\n${lines.map((text) => `  ${text}`).join('\n')}\nFlags that change the model, adapters, chat template, logging or networking are refused with the reason.`;
}

/** Prose for a terminal: lines of at most 90 characters, broken between words. */
function wrap(text: string, width = 90): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines.join('\n');
}

/** Usage per command and subcommand, keyed "command" or "command subcommand". */
const HELP: Record<string, HelpEntry> = {
  doctor: { usage: DOCTOR_USAGE, examples: ['inferlab doctor', 'inferlab doctor --json'] },
  setup: {
    usage: SETUP_USAGE,
    examples: ['inferlab setup', 'inferlab setup --backend cuda --force', 'inferlab setup --from-source --force'],
    notes:
      "Setup picks the engine for this machine: an NVIDIA driver with the CUDA 12/13 runtime libraries → CUDA; else a Vulkan GPU → Vulkan; else CPU. It compiles llama-server and its tools against prebuilt llama.cpp libraries (node-llama-cpp's platform packages, pinned like the source), which needs no CUDA toolkit, and smoke-tests the result. If that fails it builds all of llama.cpp from source and says why. --from-source skips the prebuilt libraries.",
  },
  demo: {
    usage: DEMO_USAGE,
    examples: [
      'inferlab demo',
      'inferlab demo --repeats 3 --requests 8',
      'inferlab demo --quick --model demo:q8_0 --max-tokens 32',
      'inferlab demo --capacity',
      'inferlab demo --capacity --percentile 50',
    ],
    notes:
      `The full demo compares the demo quantizations, then warm against cold, at the experiment defaults (${EXPERIMENT_DEFAULTS.repeats} windows of ${EXPERIMENT_DEFAULTS.requestsPerWindow} requests per condition). ` +
      `--repeats and --requests trade its length for the width of its intervals; below ${EXPERIMENT_DEFAULTS.minWindowsPerSide} windows or ${EXPERIMENT_DEFAULTS.minRequestsPerSide} requests per condition no latency verdict is given. ` +
      'demo --capacity searches the highest Poisson rate whose p90 TTFT stays within 100 ms; --percentile 50 judges the median, with shorter looks.',
  },
  server: { usage: `${START_USAGE}\n       ${PROFILE_USAGE}\n       ${EXPLAIN_USAGE}`, notes: 'extra-flags' },
  'server explain': {
    usage: EXPLAIN_USAGE,
    examples: ['inferlab server explain llama-server.log', 'journalctl -u llama-server | inferlab server explain -'],
    notes:
      'Reads a llama-server or llama.cpp log (any build since 2024; journald or other line prefixes and decimal commas are fine) and prints what decides performance: the build, the backend and its devices, layers and weight bytes per device, the KV cache and its types, the context, flash attention and slots. Then the warnings: most weights in host memory (MoE experts or layers left on the CPU), no layers on a GPU that was found, an integrated GPU used beside a discrete one, a quantized V cache without flash attention, a context beyond the trained length; and the failure the log ends in, with its fix.',
  },
  'server start': {
    usage: START_USAGE,
    examples: [
      'inferlab server start --model demo:q8_0 --set contextSize=4096',
      'inferlab server start --model demo:q8_0 --set extraFlags="--mlock --threads-batch 2"',
    ],
    notes: 'extra-flags',
  },
  'server profile': {
    usage: PROFILE_USAGE,
    examples: ['inferlab server profile list', 'inferlab server profile save long --set contextSize=16384'],
    notes: 'extra-flags',
  },
  models: { usage: `${SCAN_USAGE}\n       ${SEARCH_USAGE}\n       ${PLAN_USAGE}\n       ${PULL_USAGE}\n       ${QUANTIZE_USAGE}` },
  'models search': {
    usage: SEARCH_USAGE,
    examples: ['inferlab models search qwen3 8b', 'inferlab models search llama 3.1 instruct --json'],
    notes:
      'Repositories on the hub (or HF_ENDPOINT) with GGUF files whose name holds the words, most downloaded first, at most 30. Each line starts with the hf: name that models plan and models pull take; gated ones need an accepted licence and HF_TOKEN.',
  },
  'models plan': {
    usage: PLAN_USAGE,
    examples: [
      'inferlab models plan hf:Qwen/Qwen3-8B-GGUF --quants Q4_K_M,Q8_0 --ctx 16384',
      'inferlab models plan hf:unsloth/Qwen3-30B-A3B-GGUF --quants all --parallel 4 --kv q8_0 --json',
      'inferlab models plan ~/models',
    ],
    notes:
      'Before downloading anything: each GGUF header is read by HTTP range (a few MiB; split models part by part), never the whole file. Memory = weights + KV cache (--ctx tokens per slot × --parallel slots, at the --kv type) + a compute buffer (estimated from the model\'s widths for this engine\'s llama-server: within 2.1 % of its own reports for usual shapes; within 30 % of captured logs of older builds, median 2.9 %) + 512 MiB per GPU for the CUDA/ROCm runtime. Fit is against each GPU\'s free memory now (nvidia-smi or amd-smi) and the RAM available: "fits" (every layer on the GPU), "partial" (N of M layers, the rest in RAM), "cpu" (no layer fits, or no GPU), "no". The ceiling is one sequence\'s decode tokens/s at an empty context: memory bandwidth (the GPU\'s datasheet figure, or this machine\'s read probe) ÷ the weights a step reads (only the experts in use for MoE). HF_ENDPOINT, HF_TOKEN and the token file are honoured.',
  },
  'models pull': {
    usage: PULL_USAGE,
    examples: [
      'inferlab models pull hf:Qwen/Qwen3-8B-GGUF --quants Q4_K_M,Q8_0',
      'inferlab models pull hf:unsloth/Qwen3-30B-A3B-GGUF@main --quants UD-Q4_K_XL --json',
    ],
    notes:
      "Downloads into the Hugging Face cache (HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub) in its own layout (blobs named by SHA-256, snapshots/<commit>, refs), so llama.cpp, Python tools and LM Studio's scan share the files. Each file is checked against the hub's SHA-256 before it appears in the snapshot; a mismatch deletes it. The disk's free space is checked first. A dropped connection is tried again from where it stopped; a pull stopped by Ctrl-C or a lost network keeps the file in progress (blobs/<sha256>.incomplete) and the same command resumes it. Split models are pulled part by part and listed once. One pull at a time downloads a file: another pull of it (from the app or a second shell) is refused, naming the process. --quants is needed when the repository has more than one quantization (models plan shows them and what fits). HF_ENDPOINT, HF_TOKEN and the token file are honoured.",
  },
  'models scan': { usage: SCAN_USAGE, examples: ['inferlab models scan ~/models --json'] },
  'models quantize': { usage: QUANTIZE_USAGE, examples: ['inferlab models quantize model-f16.gguf --to Q8_0,Q4_K_M'] },
  run: {
    usage: RUN_USAGE,
    examples: [
      'inferlab run --workload chat-short --model demo:q8_0 --concurrency 4 --requests 40',
      'inferlab run --workload chat-short --endpoint http://127.0.0.1:8080 --rate 2 --duration 60 --json',
      'inferlab run --workload multi-turn-chat --model demo:q8_0 --concurrency 4 --requests 8',
      'inferlab run --workload embeddings --model demo:q8_0 --requests 14',
      'inferlab run --trace trace.jsonl --model demo:q8_0 --trace-speed 2 --trace-window 0:60',
      'inferlab run --workload chat-short --endpoint http://gpu-box:8000 --gpu-metrics-url http://gpu-box:9400/metrics --duration 60',
      'inferlab run --workload chat-short --endpoint http://gpu-box:8000 --rate 2000 --max-outstanding 15000 --shards 4 --requests 100000',
    ],
    notes:
      'A conversation workload (items with "turns", or the conversations generator; built in: multi-turn-chat) sends each turn with the whole history so far, then waits the think time before the next. There --concurrency N is N concurrent users, --rate R starts R conversations per second, and --requests N counts conversations; a managed server gets a slot per user unless --set parallelSlots=... says otherwise. The summary adds a table per turn: TTFT, prompt tokens and the tokens the server took from its cache. --trace FILE.jsonl replays a Mooncake-style trace (timestamp ms, input_length, output_length, hash_ids per 512-token block) at its own timing, prompts as token ids of exactly the trace lengths; --ramp-up S climbs to the load before the measured window. Every run records the block hashes of its prompts, and its export includes trace.jsonl. --gpu-metrics-url URL reads GPU telemetry (memory, utilization, power, clocks, throttling) from NVIDIA\'s dcgm-exporter or AMD\'s device-metrics-exporter on the serving machine instead of this machine\'s GPUs; the exporter samples at its own interval (dcgm-exporter -c, 30 s by default: give it -c 1000 for a reading a second). --shards N (open loop) sends the requests from N worker threads, each reading its streams on its own event loop, for rates one loop cannot keep to its schedule: the summary then adds each shard\'s requests, loop and slip. Give each shard a core of its own; the Run view shows their answers whole as each ends. An embeddings workload (items with "input", or the embeddings generator; built in: embeddings) sends /v1/embeddings to a server started with --embeddings and adds inputs/s and input tok/s; a reranking one (items with "query" and "documents"; built in: rerank) needs a reranker model.',
  },
  runs: { usage: RUNS_USAGE, examples: ['inferlab runs list', 'inferlab runs show 1a2b3c4d --json'] },
  experiments: {
    usage: EXPERIMENTS_USAGE,
    examples: ['inferlab experiments list', 'inferlab experiments show 1a2b3c4d', 'inferlab experiments show 1a2b3c4d --json'],
    notes:
      "list: the stored experiments, newest first, each with its kind, status and the first sentence of its outcome. show: one experiment's tables as its command printed them when it ended (an id or a unique prefix); --json the whole result. report ID --out FILE.html writes its report; decide records a choice.",
  },
  compare: { usage: COMPARE_USAGE, examples: ['inferlab compare 1a2b3c4d 5e6f7a8b', 'inferlab compare 1a2b3c4d 5e6f7a8b --json'] },
  race: {
    usage: RACE_USAGE,
    examples: [
      'inferlab race 1a2b3c4d 5e6f7a8b',
      'inferlab race 1a2b3c4d:3 5e6f7a8b:3 --speed 0.5',
      'inferlab race 1a2b3c4d 5e6f7a8b --html race.html',
      'inferlab race --model demo:f16 --model demo:q4_k_m --prompt "Why is the sky blue?" --max-tokens 96',
      'inferlab race --model demo:f16 --model demo:q4_k_m --together',
      'inferlab race --model demo:q8_0 --model demo:q8_0 --lane-set 2:loraAdapter=demo:lora',
      'inferlab race --model demo:f16 --model demo:q4_k_m --item extraction-json#invoice',
      'inferlab race --experiment 9f8e7d6c',
    ],
    notes:
      "Plays two to four stored requests side by side, each at the pace its tokens arrived when it was measured: a run alone gives its first measured success, RUN:SEQ a request of it (runs show lists them). In a terminal the lanes are columns redrawn in place (clock, TTFT, tokens, tok/s, the answer as it arrives); elsewhere one plain line per first token and finish. --html FILE writes the race as one self-contained HTML file to play in a browser. A private run, or one stored before each chunk's text was kept, plays as token ticks. With --model (two to four), each model is run first, one after another on its own server warmed by another prompt, one request each (default 64 tokens), and then raced: the lanes never competed for the machine, and each is a stored run to race again later. --together instead starts every lane's server, warms each, and sends all the prompts at one instant: the lanes then compete for the GPU (or the cores), which is what that mode shows. --set applies to every lane; --lane-set N:FIELD=VALUE to lane N alone (a model against itself with an adapter, or with another cache type), and names the lane by it. --item WORKLOAD#ID gives every lane that item of a workload (a built-in's name or a file) instead of a typed prompt: its messages, images and sampling, at --max-tokens; a generated item (prefill-heavy#prefill-3) is sized by the word estimate, the same words to every lane. --experiment ID races an experiment's conditions (the first window of each, up to four), each lane named by its condition.",
  },
  history: {
    usage: HISTORY_USAGE,
    examples: [
      'inferlab history --metric tpot_ms:p50',
      'inferlab history --metric ttft_ms:p95 --model demo:q8_0 --workload chat-short --json',
    ],
    notes:
      'Did a new llama.cpp build or driver make this slower? Completed runs are grouped by engine build (commit and backend), in the order each build first ran: per build its runs, the mean of their own statistic (a p95 needs 20 successful measured requests in a run), a 95 % t interval over runs (two or more), and the change against the first build. Only comparable runs are put together: same model file, workload revision, server profile (by content, not name) and load. Other configurations are printed apart, never averaged; --key picks one. Metrics: ttft_ms, tpot_ms, e2e_ms with :p50 or :p95, and output_tokens_per_s.',
  },
  export: {
    usage: EXPORT_USAGE,
    examples: [
      'inferlab export 1a2b3c4d --out ./run-export',
      'inferlab export --all --format parquet --out ./inferlab-parquet',
      "duckdb -c \"SELECT model_ref, median(ttft_ms) FROM './inferlab-parquet/requests.parquet' JOIN './inferlab-parquet/runs.parquet' USING (run_id) GROUP BY ALL\"",
    ],
    notes:
      'The default files carry schema_version and are described by resources/run-export.schema.json; inferlab import reads the folder back. --format parquet writes typed tables for pandas, polars and DuckDB (timestamps as UTC timestamps, durations in ms as doubles, ids as text, nested values as JSON text in *_json columns; the schema version in each file\'s metadata and in manifest.json): the whole store (--all), one run, or one experiment with its runs and decisions. Columns: docs/METRICS.md, "Parquet export".',
  },
  import: {
    usage: IMPORT_USAGE,
    examples: ['inferlab import ./run-export', 'inferlab import ./run-export --db other.db --json'],
    notes:
      'Reads manifest.json, summary.json, requests.jsonl and telemetry.json, checks each against resources/run-export.schema.json, and stores the run with every request and the telemetry in one transaction: a problem (a newer schema_version, a malformed line, a run id already in the database) imports nothing and names the file, line and field. The run is marked imported with its folder, and lists, compares and exports like any run.',
  },
  experiment: { usage: EXPERIMENT_USAGE },
  ...Object.fromEntries(
    KIND_TEXT_ENTRIES.map(([kind, text]) => [
      `experiment ${kind}`,
      { usage: experimentUsageOf(kind), examples: text.examples, notes: text.notes },
    ]),
  ),

  check: {
    usage: CHECK_USAGE,
    examples: [
      'inferlab check --baseline 1a2b3c4d',
      'inferlab check --baseline 1a2b3c4d --engine ~/llama.cpp/build/bin/llama-server --metrics tpot_ms:p50,ttft_ms:p95 --margin 5% --json',
      'inferlab check --baseline 1a2b3c4d --set threads=4 --interleave --repeats 4',
      'inferlab check --baseline 1a2b3c4d --run 5e6f7a8b,9c0d1e2f',
    ],
    notes:
      'A regression gate for CI. The baseline is a run (or an experiment: the runs of its recommended condition, or --condition). The candidate is the baseline configuration measured again in --repeats windows (default 3), on --engine PATH when given (any llama-server build, to compare a new build or driver with the one you trust) and with --set changes over its profile, or stored runs given with --run. Each run is one window; per metric a one-sided t test over the windows decides whether the candidate is worse by more than --margin (default 5 %) beyond doubt, 5 % error in all. Refused (exit 2) when the model file (sha256) or the workload revision differ: those figures are not comparable. Without --interleave the stored baseline is the reference, so anything that drifted since it was measured counts as change; --interleave measures the baseline configuration again on its own llama-server, in windows alternated with the candidate (ABBA), and judges against those fresh windows (twice the time; refused when the baseline build is gone).',
  },
  report: { usage: REPORT_USAGE, examples: ['inferlab report 1a2b3c4d --out report.html'] },
  decide: { usage: DECIDE_USAGE, examples: ['inferlab decide 1a2b3c4d --choose q8_0 --reason "same answers, half the memory"'] },
  decisions: { usage: DECIDE_USAGE, examples: ['inferlab decisions --json'] },
  serve: { usage: SERVE_USAGE, examples: ['inferlab serve --port 8123'] },
  app: { usage: 'inferlab app' },
  completion: { usage: COMPLETION_USAGE, examples: ['source <(inferlab completion bash)', 'inferlab completion zsh > ~/.zfunc/_inferlab'] },
};

/** The words `inferlab … --help` takes for the most precise help there is: `experiment adapter`, else `experiment`. */
export function helpTopic(command: string, subcommand: string | undefined): string {
  return subcommand !== undefined && HELP[`${command} ${subcommand}`] ? `${command} ${subcommand}` : command;
}

/** The usage of `command [subcommand]`, or null when there is no such command. */
export function commandHelp(command: string, subcommand: string | undefined): string | null {
  const entry = (subcommand !== undefined ? HELP[`${command} ${subcommand}`] : undefined) ?? HELP[command];
  if (!entry) return null;
  const examples = entry.examples?.length ? `\n\nExamples:\n${entry.examples.map((line) => `  ${line}`).join('\n')}` : '';
  const notes = entry.notes === undefined ? '' : `\n\n${entry.notes === 'extra-flags' ? extraFlagsNote() : wrap(entry.notes)}`;
  return `Usage: ${entry.usage}${examples}${notes}\n\nEvery command takes -h/--help; --json makes failures one JSON document on stdout.\nExit status: 0 success, 2 invalid input or usage, 1 runtime failure.`;
}

/** Whether ARGS ask for help; words after `--` are values, never flags. */
export function wantsHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}

/** Commands, their subcommands and every flag their usage names: what shell completion offers. */
export function commandTable(): Map<string, { subcommands: string[]; flags: string[] }> {
  const table = new Map<string, { subcommands: string[]; flags: string[] }>();
  for (const [key, entry] of Object.entries(HELP)) {
    const [command, subcommand] = key.split(' ') as [string, string | undefined];
    const row = table.get(command) ?? { subcommands: [], flags: [] };
    // Subcommands: the keyed ones, and the words a usage line puts right after the command.
    const named = [
      subcommand,
      ...[...entry.usage.matchAll(/inferlab (\w+) ([a-z][a-z-]*)\b/g)].filter((match) => match[1] === command).map((match) => match[2]),
    ];
    for (const word of named) if (word && !row.subcommands.includes(word)) row.subcommands.push(word);
    for (const flag of entry.usage.match(/--[a-z][a-z0-9-]*/g) ?? []) if (!row.flags.includes(flag)) row.flags.push(flag);
    table.set(command, row);
  }
  for (const row of table.values()) row.flags.push('--help');
  return table;
}

/**
 * A completion script for bash, generated from the command table; zsh loads the same one
 * through bashcompinit.
 */
export function completionScript(shell: 'bash' | 'zsh'): string {
  const table = commandTable();
  const commands = [...table.keys(), 'help'].sort().join(' ');
  const cases = [...table.entries()]
    .filter(([command]) => command !== 'completion')
    .map(([command, row]) => `    ${command}) words="${[...row.subcommands, ...row.flags].join(' ')}" ;;`)
    .join('\n');
  const bash = [
    '# inferlab shell completion, generated from its command table (inferlab completion bash|zsh)',
    '_inferlab() {',
    '  local cur="${COMP_WORDS[COMP_CWORD]}" words',
    '  if [ "$COMP_CWORD" -eq 1 ]; then',
    `    COMPREPLY=( $(compgen -W "${commands} --help --version" -- "$cur") )`,
    '    return',
    '  fi',
    '  case "${COMP_WORDS[1]}" in',
    cases,
    `    help) words="${[...table.keys()].sort().join(' ')}" ;;`,
    '    completion) words="bash zsh" ;;',
    '    *) words="" ;;',
    '  esac',
    '  COMPREPLY=( $(compgen -W "$words" -- "$cur") )',
    '}',
    'complete -F _inferlab inferlab',
  ].join('\n');
  return shell === 'zsh' ? `autoload -U +X bashcompinit && bashcompinit\n${bash}\n` : `${bash}\n`;
}
