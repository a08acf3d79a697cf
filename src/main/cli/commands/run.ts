import type { LoadSpec } from '../../runner/load-generator';
import { ErrorCode } from '../../../shared/errors';
import { AppError } from '../../core/errors';
import { endpointHeaders } from '../../engines/adapters/endpoints';
import type { SloSpec } from '../../metrics/run-summary';
import { resolveModelRef } from '../../models/demo-models';
import { runWorkload, type RunTargetSpec } from '../../runner/run-workload';
import { applySettings } from '../../engines/llamacpp/profile-rules';
import { readWorkloadFile, workloadPath } from '../../workload/parse-workload';
import { parseOptions, type CommandHandler } from '../args';
import { openCliContext } from '../context';
import { formatMs } from '../format';
import { progressWriter } from '../progress';
import { printSummary } from '../summary-table';
import { RUN_USAGE as USAGE } from '../usage';

function usage(message: string): never {
  throw new AppError(ErrorCode.Usage, `${message}\n\nUsage: ${USAGE}`);
}

function positive(name: string, raw: string | undefined, integer: boolean): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) usage(`--${name} must be a positive ${integer ? 'integer' : 'number'}, got "${raw}"`);
  return value;
}

export function parseSlo(raw: string | undefined): SloSpec | null {
  if (raw === undefined) return null;
  const slo: SloSpec = {};
  for (const part of raw.split(',')) {
    const [key, value] = part.split('=');
    const name = `${key?.trim()}_ms` as keyof SloSpec;
    if (!['ttft_ms', 'tpot_ms', 'e2e_ms'].includes(name) || value === undefined) usage(`--slo expects ttft=MS,tpot=MS,e2e=MS, got "${part}"`);
    const limit = Number(value);
    if (!Number.isFinite(limit) || limit <= 0) usage(`--slo ${key} must be a positive number of milliseconds, got "${value}"`);
    slo[name] = limit;
  }
  return slo;
}

export const runCommand: CommandHandler = async (args, signal) => {
  const { values } = parseOptions(args, {
    workload: { type: 'string' }, model: { type: 'string' }, endpoint: { type: 'string' },
    concurrency: { type: 'string' }, rate: { type: 'string' }, burstiness: { type: 'string' }, 'max-outstanding': { type: 'string' },
    requests: { type: 'string' }, duration: { type: 'string' }, warmup: { type: 'string' }, slo: { type: 'string' },
    'first-token-timeout': { type: 'string' }, timeout: { type: 'string' }, reference: { type: 'string' },
    profile: { type: 'string' }, set: { type: 'string', multiple: true }, 'api-key-env': { type: 'string' }, 'metrics-url': { type: 'string' },
    private: { type: 'boolean' }, force: { type: 'boolean' }, db: { type: 'string' }, json: { type: 'boolean' },
  }, USAGE);
  if (!values.workload) usage('--workload is required');
  if (!values.model === !values.endpoint) usage('give exactly one of --model or --endpoint');
  if (values.concurrency !== undefined && values.rate !== undefined) usage('--concurrency (closed loop) and --rate (open loop) exclude each other');
  if (values.rate === undefined && (values.burstiness !== undefined || values['max-outstanding'] !== undefined)) usage('--burstiness and --max-outstanding need --rate');
  if (values.requests !== undefined && values.duration !== undefined) usage('--requests and --duration exclude each other');
  const rate = positive('rate', values.rate, false);
  const load: LoadSpec = rate !== undefined
    ? { mode: 'open', rate, burstiness: positive('burstiness', values.burstiness, false) ?? 1, maxOutstanding: positive('max-outstanding', values['max-outstanding'], true) ?? 256 }
    : { mode: 'closed', concurrency: positive('concurrency', values.concurrency, true) ?? 1 };
  const requests = positive('requests', values.requests, true) ?? null;
  const duration = positive('duration', values.duration, false);
  const warmupRaw = values.warmup ?? '0';
  const warmup = Number(warmupRaw);
  if (!Number.isInteger(warmup) || warmup < 0) usage(`--warmup must be a whole number ≥ 0, got "${warmupRaw}"`);
  const slo = parseSlo(values.slo);
  const timeouts = { firstTokenMs: (positive('first-token-timeout', values['first-token-timeout'], false) ?? 120) * 1000, totalMs: (positive('timeout', values.timeout, false) ?? 600) * 1000 };

  // Bad input fails here, before the database is opened or a server started.
  const file = workloadPath(values.workload);
  const def = readWorkloadFile(file);
  const modelPath = values.model ? await resolveModelRef(values.model) : null;
  let endpoint: string | null = null;
  if (values.endpoint) {
    try {
      const url = new URL(values.endpoint);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http');
      endpoint = url.toString().replace(/\/$/, '').replace(/\/v1$/, '');
    } catch {
      usage(`--endpoint must be an http(s) URL of the server root, got "${values.endpoint}"`);
    }
  }

  const context = await openCliContext(values.db);
  try {
    if (values.reference && !context.store.runs.findRun(values.reference)) throw new AppError(ErrorCode.NotFound, `--reference: no run ${values.reference} in ${context.dbPath}`);
    const target: RunTargetSpec = modelPath
      ? { kind: 'model', modelRef: values.model!, modelPath, profile: applySettings(context.store.profiles.get(values.profile ?? 'default'), values.set ?? []), force: values.force ?? false }
      : { kind: 'endpoint', url: endpoint!, headers: endpointHeaders(process.env, values['api-key-env'] ?? 'INFERLAB_API_KEY') };
    const progress = progressWriter();
    const { summary } = await runWorkload({
      request: { workload: { def, file }, target, metricsUrl: values['metrics-url'] ?? null, load, stop: { requests, durationMs: duration === undefined ? null : duration * 1000 }, warmup, slo, timeouts, private: values.private ?? false, referenceRunId: values.reference ? context.store.runs.findRun(values.reference)!.id : null },
      store: context.store.runs,
      servers: context.servers,
      engine: context.engine,
      signal,
      onStatus: (line) => progress.line(line),
      onProgress: (update) => progress.live(`${update.warmup ? 'warmup ' : ''}${update.finished} done, ${update.failed} failed, last TTFT ${formatMs(update.lastTtftMs)}`),
    });
    progress.end();
    if (values.json) process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
    else printSummary(summary);
    return summary.status === 'completed' ? 0 : summary.status === 'interrupted' ? 130 : 1;
  } finally {
    await context.dispose();
  }
};
