import type { StartRunSpec } from '../../../shared/contract';
import { ErrorCode } from '../../../shared/errors';
import { AppError } from '../../core/errors';
import { SLO_METRICS, sloFlagName, type SloSpec } from '../../../shared/contract/runs';
import { shellAccess } from '../../services/access';
import { checkRunShape, checkRunSpec } from '../../services/run-spec';
import { parseOptions, type CommandHandler } from '../args';
import { openCliServices } from '../service-context';
import { progressWriter, runProgressLine } from '../progress';
import { printSummary } from '../summary-table';
import { RUN_USAGE as USAGE } from '../usage';

function usage(message: string): never {
  throw new AppError(ErrorCode.Usage, `${message}\n\nUsage: ${USAGE}`);
}

function positive(name: string, raw: string | undefined, integer: boolean): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value)))
    usage(`--${name} must be a positive ${integer ? 'integer' : 'number'}, got "${raw}"`);
  return value;
}

export function parseSlo(raw: string | undefined): SloSpec | null {
  if (raw === undefined) return null;
  const slo: SloSpec = {};
  for (const part of raw.split(',')) {
    const [key, value] = part.split('=');
    const name = SLO_METRICS.find((metric) => sloFlagName(metric) === key?.trim());
    if (name === undefined || value === undefined)
      usage(`--slo expects ${SLO_METRICS.map((metric) => `${sloFlagName(metric)}=MS`).join(',')}, got "${part}"`);
    const limit = Number(value);
    if (!Number.isFinite(limit) || limit <= 0) usage(`--slo ${key} must be a positive number of milliseconds, got "${value}"`);
    slo[name] = limit;
  }
  return slo;
}

const RUN_FLAGS = {
  workload: { type: 'string' },
  trace: { type: 'string' },
  'trace-speed': { type: 'string' },
  'trace-window': { type: 'string' },
  'block-tokens': { type: 'string' },
  model: { type: 'string' },
  endpoint: { type: 'string' },
  concurrency: { type: 'string' },
  rate: { type: 'string' },
  burstiness: { type: 'string' },
  'max-outstanding': { type: 'string' },
  shards: { type: 'string' },
  'ramp-up': { type: 'string' },
  ramp: { type: 'string' },
  requests: { type: 'string' },
  duration: { type: 'string' },
  warmup: { type: 'string' },
  slo: { type: 'string' },
  'first-token-timeout': { type: 'string' },
  timeout: { type: 'string' },
  reference: { type: 'string' },
  profile: { type: 'string' },
  set: { type: 'string', multiple: true },
  'api-key-env': { type: 'string' },
  'metrics-url': { type: 'string' },
  'gpu-metrics-url': { type: 'string' },
  private: { type: 'boolean' },
  force: { type: 'boolean' },
  db: { type: 'string' },
  json: { type: 'boolean' },
} as const;

type RunFlagValues = ReturnType<typeof parseOptions<typeof RUN_FLAGS>>['values'];

/** The workload or trace to replay, and how the trace is replayed (its speed, block size and window). */
function traceOf(values: RunFlagValues): { workload: string; trace: StartRunSpec['trace'] } {
  if (values.trace !== undefined && values.workload !== undefined) usage('--trace replaces --workload: give one of them');
  if (values.trace !== undefined && !values.trace.toLowerCase().endsWith('.jsonl'))
    usage(`--trace takes a JSON Lines file (.jsonl), got "${values.trace}"`);
  const workload = values.trace ?? values.workload;
  if (!workload) return usage('--workload (or --trace FILE.jsonl) is required');
  if (values.trace !== undefined && (values.concurrency !== undefined || values.rate !== undefined))
    usage('a trace replays its own arrival times: --concurrency and --rate do not apply (--trace-speed scales them)');
  let window: { startS: number | null; endS: number | null } = { startS: null, endS: null };
  if (values['trace-window'] !== undefined) {
    const match = /^(\d+(?:\.\d+)?)?:(\d+(?:\.\d+)?)?$/.exec(values['trace-window']);
    if (!match || (match[1] === undefined && match[2] === undefined))
      usage(`--trace-window takes START:END in seconds (either may be left out, as in 60: or :120), got "${values['trace-window']}"`);
    window = { startS: match![1] === undefined ? null : Number(match![1]), endS: match![2] === undefined ? null : Number(match![2]) };
  }
  const traceAsked = (['trace-speed', 'trace-window', 'block-tokens'] as const).some((flag) => values[flag] !== undefined);
  const trace = traceAsked
    ? {
        speed: positive('trace-speed', values['trace-speed'], false) ?? null,
        blockTokens: positive('block-tokens', values['block-tokens'], true) ?? null,
        ...window,
      }
    : null;
  return { workload, trace };
}

/** Warm-up requests, and the ramp's shape only with a ramp. */
function warmupOf(values: RunFlagValues): number {
  const warmupRaw = values.warmup ?? '0';
  const warmup = Number(warmupRaw);
  if (!Number.isInteger(warmup) || warmup < 0) usage(`--warmup must be a whole number ≥ 0, got "${warmupRaw}"`);
  if (values.ramp !== undefined && values.ramp !== 'linear' && values.ramp !== 'exponential')
    usage(`--ramp must be linear or exponential, got "${values.ramp}"`);
  if (values.ramp !== undefined && values['ramp-up'] === undefined) usage('--ramp needs --ramp-up SECONDS');
  return warmup;
}

/** argv → the spec the UI sends, plus what only the terminal wants (database, JSON). */
export function runSpecFromArgs(args: string[]): { spec: StartRunSpec; output: { db?: string; json?: boolean } } {
  const { values } = parseOptions(args, RUN_FLAGS, USAGE);
  const { workload, trace } = traceOf(values);
  if (!values.model === !values.endpoint) usage('give exactly one of --model or --endpoint');
  const warmup = warmupOf(values);
  // The same spec the UI sends; every flag has its field.
  const spec: StartRunSpec = {
    workload,
    model: values.model ?? null,
    endpoint: values.endpoint ?? null,
    apiKeyEnv: values['api-key-env'] ?? null,
    profileName: values.profile ?? 'default',
    settings: values.set ?? [],
    force: values.force ?? false,
    concurrency: positive('concurrency', values.concurrency, true) ?? null,
    rate: positive('rate', values.rate, false) ?? null,
    burstiness: positive('burstiness', values.burstiness, false) ?? null,
    maxOutstanding: positive('max-outstanding', values['max-outstanding'], true) ?? null,
    shards: positive('shards', values.shards, true) ?? null,
    rampUpS: positive('ramp-up', values['ramp-up'], false) ?? null,
    rampShape: (values.ramp as 'linear' | 'exponential' | undefined) ?? null,
    requests: positive('requests', values.requests, true) ?? null,
    trace,
    durationS: positive('duration', values.duration, false) ?? null,
    warmup,
    slo: parseSlo(values.slo),
    firstTokenTimeoutS: positive('first-token-timeout', values['first-token-timeout'], false) ?? null,
    timeoutS: positive('timeout', values.timeout, false) ?? null,
    referenceRunId: values.reference ?? null,
    metricsUrl: values['metrics-url'] ?? null,
    gpuMetricsUrl: values['gpu-metrics-url'] ?? null,
    private: values.private ?? false,
  };
  // Bad input fails here, before the database is opened or a server started.
  try {
    checkRunShape(spec);
  } catch (error) {
    usage((error as Error).message);
  }
  return { spec, output: { db: values.db, json: values.json } };
}

export const runCommand: CommandHandler = async (args, signal) => {
  const { spec, output } = runSpecFromArgs(args);
  const access = shellAccess();
  await checkRunSpec(spec, access);
  const container = await openCliServices(output.db, access);
  try {
    const progress = progressWriter();
    let startedAt = performance.now();
    const summary = await container.runs.run(spec, {
      signal,
      onStatus: (line) => progress.line(line),
      onRunCreated: () => (startedAt = performance.now()),
      onProgress: (update) => progress.live(runProgressLine(update, performance.now() - startedAt)),
    });
    progress.end();
    if (output.json) process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
    else printSummary(summary);
    return summary.status === 'completed' ? 0 : summary.status === 'interrupted' ? 130 : 1;
  } finally {
    await container.dispose();
  }
};
