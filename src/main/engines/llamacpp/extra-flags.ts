/**
 * The llama-server flags a profile may add beyond its own fields: tuning only, each with a
 * typed value. Anything that changes which model or adapter is served, the chat template,
 * logging or networking is refused with the reason, because the run's manifest would
 * then describe something other than what ran, or the flag would reach outside the server
 * (a log file of the caller's choosing, an RPC backend, a download).
 */

type ValueRule =
  | { kind: 'switch' }
  | { kind: 'int'; min: number; max: number }
  | { kind: 'number'; min: number; max: number }
  | { kind: 'choice'; values: readonly string[] }
  | { kind: 'pattern'; pattern: RegExp; describe: string };

const SWITCH: ValueRule = { kind: 'switch' };
const int = (min: number, max: number): ValueRule => ({ kind: 'int', min, max });
const num = (min: number, max: number): ValueRule => ({ kind: 'number', min, max });
const choice = (...values: string[]): ValueRule => ({ kind: 'choice', values });
const BIT = choice('0', '1');
const CPU_MASK: ValueRule = { kind: 'pattern', pattern: /^(0x)?[0-9a-f]{1,256}$/i, describe: 'a hexadecimal CPU mask' };
const CPU_RANGE: ValueRule = { kind: 'pattern', pattern: /^\d{1,5}-\d{1,5}$/, describe: 'a CPU range like 0-7' };
const DEVICES: ValueRule = {
  kind: 'pattern',
  pattern: /^[\w-]{1,64}(,[\w-]{1,64}){0,63}$/,
  describe: 'comma-separated device names, or none',
};
const SPLIT: ValueRule = {
  kind: 'pattern',
  pattern: /^\d+(\.\d+)?(,\d+(\.\d+)?){0,63}$/,
  describe: 'comma-separated proportions like 3,1',
};
// A tensor-name pattern and a buffer type, e.g. "blk\.[0-9]+\.ffn_.*=CPU": placement only.
const TENSOR_OVERRIDE: ValueRule = {
  kind: 'pattern',
  pattern: /^[^\s=,]{1,256}=[\w-]{1,64}(,[^\s=,]{1,256}=[\w-]{1,64}){0,63}$/,
  describe: 'PATTERN=BUFFER_TYPE pairs separated by commas',
};
const SAMPLERS: ValueRule = { kind: 'pattern', pattern: /^[a-z_;]{1,256}$/, describe: 'sampler names separated by semicolons' };
const KV_TYPE = choice('f32', 'f16', 'bf16', 'q8_0', 'q4_0', 'q4_1', 'iq4_nl', 'q5_0', 'q5_1');
const INT_MAX = 2_147_483_647;

/** Every spelling of each allowed flag, with its value rule. */
const ALLOWED: readonly [readonly string[], ValueRule][] = [
  // Threads, affinity, priority.
  [['-tb', '--threads-batch'], int(1, 4096)],
  [['-C', '--cpu-mask', '-Cb', '--cpu-mask-batch'], CPU_MASK],
  [['-Cr', '--cpu-range', '-Crb', '--cpu-range-batch'], CPU_RANGE],
  [['--cpu-strict', '--cpu-strict-batch'], BIT],
  [['--prio', '--prio-batch'], int(-1, 3)],
  [['--poll'], int(0, 100)],
  [['--poll-batch'], BIT],
  [['--numa'], choice('distribute', 'isolate', 'numactl')],
  [['--threads-http'], int(-1, 1024)],
  // Memory placement and loading.
  [
    [
      '-kvo',
      '--kv-offload',
      '-nkvo',
      '--no-kv-offload',
      '--repack',
      '-nr',
      '--no-repack',
      '--no-host',
      '-dio',
      '--direct-io',
      '-ndio',
      '--no-direct-io',
      '--mlock',
      '--mmap',
      '--no-mmap',
      '-cmoe',
      '--cpu-moe',
      '--op-offload',
      '--no-op-offload',
      '--swa-full',
      '--check-tensors',
    ],
    SWITCH,
  ],
  [['-lm', '--load-mode'], choice('auto', 'none', 'mmap', 'mlock', 'mmap+mlock', 'dio')],
  [['-lzm', '--lazy-mode'], choice('on', 'auto', 'off')],
  [['-dev', '--device'], DEVICES],
  [['-sm', '--split-mode'], choice('none', 'layer', 'row', 'tensor')],
  [['-ts', '--tensor-split'], SPLIT],
  [['-mg', '--main-gpu'], int(0, 255)],
  [['-ot', '--override-tensor'], TENSOR_OVERRIDE],
  [['-ncmoe', '--n-cpu-moe', '-ncffn', '--n-cpu-ffn'], int(0, 10_000)],
  // Batching, slots and the KV cache.
  [
    [
      '-cb',
      '--cont-batching',
      '-nocb',
      '--no-cont-batching',
      '-kvu',
      '--kv-unified',
      '-no-kvu',
      '--no-kv-unified',
      '--cache-idle-slots',
      '--no-cache-idle-slots',
      '--context-shift',
      '--no-context-shift',
      '--cache-prompt',
      '--no-cache-prompt',
      '--warmup',
      '--no-warmup',
      '--perf',
      '--no-perf',
      '-bs',
      '--backend-sampling',
    ],
    SWITCH,
  ],
  [['--keep'], int(-1, INT_MAX)],
  [['-n', '--predict', '--n-predict'], int(-2, INT_MAX)],
  [['-ctxcp', '--ctx-checkpoints', '--swa-checkpoints'], int(0, 1024)],
  [['-cms', '--checkpoint-min-step'], int(0, INT_MAX)],
  [['--kv-unified-per-slot'], int(0, INT_MAX)],
  [['-sps', '--slot-prompt-similarity'], num(0, 1)],
  [['-to', '--timeout'], int(1, 86_400)],
  [['--sse-ping-interval'], int(-1, 86_400)],
  // RoPE / YaRN context extension: recorded in argv, so the manifest still says what ran.
  [['--rope-scaling'], choice('none', 'linear', 'yarn')],
  [
    [
      '--rope-scale',
      '--rope-freq-base',
      '--rope-freq-scale',
      '--yarn-ext-factor',
      '--yarn-attn-factor',
      '--yarn-beta-slow',
      '--yarn-beta-fast',
    ],
    num(-1e9, 1e9),
  ],
  [['--yarn-orig-ctx'], int(0, 16_777_216)],
  // Default sampling (each request may still set its own).
  [['-s', '--seed'], int(-1, 4_294_967_295)],
  [
    [
      '--temp',
      '--temperature',
      '--top-p',
      '--min-p',
      '--typical',
      '--typical-p',
      '--xtc-probability',
      '--xtc-threshold',
      '--repeat-penalty',
      '--presence-penalty',
      '--frequency-penalty',
      '--top-nsigma',
      '--top-n-sigma',
      '--dynatemp-range',
      '--dynatemp-exp',
      '--mirostat-lr',
      '--mirostat-ent',
      '--dry-multiplier',
      '--dry-base',
    ],
    num(-1e6, 1e6),
  ],
  [['--top-k', '--repeat-last-n', '--dry-allowed-length', '--dry-penalty-last-n'], int(-1, INT_MAX)],
  [['--mirostat'], choice('0', '1', '2')],
  [['--samplers', '--sampler-seq', '--sampling-seq'], SAMPLERS],
  [['--ignore-eos'], SWITCH],
  // Reasoning extraction: how the answer and reasoning text are separated, which runs measure.
  [['--reasoning-format'], choice('none', 'deepseek', 'deepseek-legacy', 'auto')],
  [['-rea', '--reasoning'], choice('on', 'off', 'auto')],
  [['--reasoning-budget'], int(-1, INT_MAX)],
  // Draft-free speculative decoding; a draft *model* changes what is loaded and gets a profile field.
  [['--spec-type'], choice('none', 'ngram-simple', 'ngram-map-k', 'ngram-map-k4v', 'ngram-mod', 'ngram-cache')],
  [
    [
      '--spec-draft-n-max',
      '--spec-draft-n-min',
      '--spec-ngram-mod-n-min',
      '--spec-ngram-mod-n-max',
      '--spec-ngram-mod-n-match',
      '--spec-ngram-simple-size-n',
      '--spec-ngram-simple-size-m',
      '--spec-ngram-simple-min-hits',
      '--spec-ngram-map-k-size-n',
      '--spec-ngram-map-k-size-m',
      '--spec-ngram-map-k-min-hits',
      '--spec-ngram-map-k4v-size-n',
      '--spec-ngram-map-k4v-size-m',
      '--spec-ngram-map-k4v-min-hits',
    ],
    int(0, 4096),
  ],
  [['--spec-draft-p-min', '--draft-p-min', '--spec-draft-p-split', '--draft-p-split'], num(0, 1)],
  [['-ctkd', '--cache-type-k-draft', '--spec-draft-type-k', '-ctvd', '--cache-type-v-draft', '--spec-draft-type-v'], KV_TYPE],
];

const RULES = new Map<string, ValueRule>(ALLOWED.flatMap(([names, rule]) => names.map((name) => [name, rule] as [string, ValueRule])));

/** Why well-known flags are refused; any other flag not in the allow-list gets a generic reason. */
const REFUSED: readonly [RegExp, string][] = [
  [
    /^(-m|--model|-mu|--model-url|-hf|-hfr|--hf-repo|-hff|--hf-file|-dr|--docker-repo|--override-kv|-md|--model-draft|--spec-draft-model|-hfd|-hfrd|--hf-repo-draft|--spec-draft-hf|--models-dir|--models-preset|--models-max|--models-autoload|--no-models-autoload|--spec-default|--(fim|gpt-oss|vision|embd)-[\w.-]+)$/,
    "it changes which model is served, so the run would record another model's name and hash",
  ],
  [
    /^(-mm|--mmproj|-mmu|--mmproj-url|--lora|--lora-scaled|--lora-init-without-apply|--control-vector|--control-vector-scaled|--control-vector-layer-range)$/,
    "it loads an adapter or projector the run's manifest would not record",
  ],
  [
    /^(--chat-template|--chat-template-file|--chat-template-kwargs|--jinja|--no-jinja|--grammar|--grammar-file|-j|--json-schema|-jf|--json-schema-file|-e|--escape|--no-escape|-sp|--special|-r|--reverse-prompt|--prefill-assistant|--no-prefill-assistant|--skip-chat-parsing|--no-skip-chat-parsing)$/,
    'it changes the chat template or constrains the output, so the same workload would send different text',
  ],
  [
    /^(--log-file|--log-disable|-v|--verbose|--log-verbose|-lv|--verbosity|--log-verbosity|--log-colors|--log-prefix|--no-log-prefix|--log-timestamps|--no-log-timestamps|--log-prompts-dir)$/,
    "Infer Lab sets the server's logging itself: it reads the log back, and private runs rely on it not logging request text",
  ],
  [
    /^(--host|--port|--reuse-port|--path|--api-prefix|--cors-[\w-]+|--api-key|--api-key-file|--ssl-key-file|--ssl-cert-file|--rpc|--props|--tools|--tools-runtime|--mcp-[\w-]+|-ag|--agent|-no-ag|--no-agent|--ui|--webui|--no-ui|--no-webui|--ui-[\w-]+|--webui-[\w-]+|--media-path|--slot-save-path|--offline|-hft|--hf-token|--embedding|--embeddings|--rerank|--reranking|--sleep-idle-seconds|--metrics|--slots|--no-slots|--fit|-fit|-fitt|--fit-target|-fitc|--fit-ctx)$/,
    'it changes how the server is reached, secured or exposed, or a setting Infer Lab manages itself',
  ],
];

export interface FlagProblem {
  flag: string;
  message: string;
}

function valueProblem(flag: string, rule: ValueRule, value: string): string | null {
  switch (rule.kind) {
    case 'switch':
      return null;
    case 'int': {
      const number = Number(value);
      return /^-?\d+$/.test(value) && number >= rule.min && number <= rule.max
        ? null
        : `${flag} takes a whole number from ${rule.min} to ${rule.max}, got ${JSON.stringify(value)}`;
    }
    case 'number': {
      const number = Number(value);
      return value.trim() !== '' && Number.isFinite(number) && number >= rule.min && number <= rule.max
        ? null
        : `${flag} takes a number from ${rule.min} to ${rule.max}, got ${JSON.stringify(value)}`;
    }
    case 'choice':
      return rule.values.includes(value) ? null : `${flag} takes one of ${rule.values.join(', ')}, got ${JSON.stringify(value)}`;
    case 'pattern':
      return rule.pattern.test(value) ? null : `${flag} takes ${rule.describe}, got ${JSON.stringify(value)}`;
  }
}

/** Every problem with a profile's extra flags: unknown or refused flags, missing or mistyped values. */
export function extraFlagProblems(flags: readonly string[]): FlagProblem[] {
  const problems: FlagProblem[] = [];
  for (let index = 0; index < flags.length; index += 1) {
    const token = flags[index]!;
    if (!token.startsWith('-')) {
      problems.push({ flag: token, message: `expected a flag, got ${JSON.stringify(token)}; each value follows its flag` });
      continue;
    }
    const separator = token.indexOf('=');
    const flag = separator > 0 ? token.slice(0, separator) : token;
    const rule = RULES.get(flag);
    if (!rule) {
      const refused = REFUSED.find(([pattern]) => pattern.test(flag));
      problems.push({
        flag,
        message: refused
          ? `${flag} is not allowed: ${refused[1]}`
          : `${flag} is not a tuning flag Infer Lab passes to llama-server; see "inferlab server --help" for the allowed extra flags`,
      });
      // Skip the value too, so it is not reported as a stray word.
      if (separator < 0 && index + 1 < flags.length && !flags[index + 1]!.startsWith('-')) index += 1;
      continue;
    }
    if (rule.kind === 'switch') {
      if (separator > 0) problems.push({ flag, message: `${flag} takes no value` });
      continue;
    }
    let value: string | undefined;
    if (separator > 0) value = token.slice(separator + 1);
    else {
      value = flags[index + 1];
      index += 1;
    }
    if (value === undefined) {
      problems.push({ flag, message: `${flag} needs a value` });
      continue;
    }
    const problem = valueProblem(flag, rule, value);
    if (problem) problems.push({ flag, message: problem });
  }
  return problems;
}

/** Every allowed long spelling (and short ones that have no long form), for help text. */
export function allowedExtraFlags(): string[] {
  return ALLOWED.flatMap(([names]) => {
    const long = names.filter((name) => name.startsWith('--'));
    return long.length > 0 ? long : names;
  }).sort();
}
