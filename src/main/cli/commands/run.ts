import type { LoadSpec } from '../../runner/load-generator';
import { ErrorCode } from '../../../shared/errors';
import { PERCENTILE_MIN_N } from '../../../shared/experiment-defaults';
import { AppError } from '../../core/errors';
import { endpointHeaders } from '../../engines/adapters/endpoints';
import type { RunSummary, SloSpec } from '../../metrics/run-summary';
import { resolveModelRef } from '../../models/demo-models';
import { runWorkload, type RunTargetSpec } from '../../runner/run-workload';
import { applySettings } from '../../server/profiles';
import { readWorkloadFile, workloadPath } from '../../workload/parse-workload';
import { parseOptions, type CommandHandler } from '../args';
import { openCliContext } from '../context';
import { formatMs, formatNumber, formatPercentile, formatTable } from '../format';
import { progressWriter } from '../progress';

export const USAGE = `inferlab run --workload FILE|NAME (--model MODEL | --endpoint URL)
    [--concurrency N | --rate R [--burstiness B] [--max-outstanding N]] [--requests N | --duration S] [--warmup N]
    [--slo ttft=MS,tpot=MS,e2e=MS] [--first-token-timeout S] [--timeout S] [--reference RUN_ID]
    [--profile NAME] [--set FIELD=VALUE ...] [--force] [--api-key-env VAR] [--metrics-url URL] [--private] [--db PATH] [--json]`;

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

function distributionRow(name: string, d: RunSummary['metrics']['ttft_ms']): string[] {
  return [name, String(d.n), formatMs(d.mean), formatMs(d.p50), formatPercentile(d, 'p90'), formatPercentile(d, 'p95'), formatPercentile(d, 'p99'), formatMs(d.max)];
}

export function printSummary(summary: RunSummary): void {
  const u = summary.measurement.unsupported_percentiles;
  const r = summary.requests;
  const lines = [
    `run ${summary.run_id}  ${summary.status}${summary.status_reason ? ` (${summary.status_reason})` : ''}`,
    `workload ${summary.workload.name} @ ${summary.workload.revision?.slice(0, 12)}`,
    `requests: ${r.attempted} attempted, ${r.completed} completed, ${r.failed} failed${Object.keys(r.failures_by_class).length ? ` (${Object.entries(r.failures_by_class).map(([k, v]) => `${k} ${v}`).join(', ')})` : ''}, ${r.accepted} accepted (${r.checked} checked); warmup ${summary.warmup_requests} excluded`,
    '',
    formatTable([
      ['metric', 'n', 'mean', 'p50', 'p90', 'p95', 'p99', 'max'],
      ...(['ttft_ms', 'tpot_ms', 'itl_ms', 'e2e_ms', 'queue_ms', 'client_overhead_ms'] as const).map((name) => distributionRow(name, summary.metrics[name])),
      ...(summary.schedule_latency ? (['ttft_from_schedule_ms', 'e2e_from_schedule_ms'] as const).map((name) => distributionRow(name, summary.schedule_latency![name])) : []),
      ...(summary.reasoning ? [distributionRow('ttfr_ms (reasoning)', summary.reasoning.ttfr_ms), distributionRow('ttfa_ms (answer)', summary.reasoning.ttfa_ms)] : []),
    ]),
    ...(summary.measurement?.slot_wait_note ? [`client_overhead_ms: ${summary.measurement.slot_wait_note}`] : []),
    ...(summary.reasoning ? [`reasoning: ${summary.reasoning.requests_with_reasoning} requests, ${summary.reasoning.tokens.n ? `${formatNumber(summary.reasoning.tokens.mean)} tokens mean (server tokenizer)` : 'tokens not counted'}${summary.reasoning.tokens_uncounted ? `; ${summary.reasoning.tokens_uncounted} uncounted: ${summary.reasoning.tokens_uncounted_reason}` : ''}`] : []),
    '',
    `throughput: ${formatNumber(summary.throughput.requests_per_s, 2)} req/s, ${formatNumber(summary.throughput.output_tokens_per_s)} output tok/s, ${formatNumber(summary.throughput.total_tokens_per_s)} total tok/s over ${formatMs(summary.measurement.window_ms)}`,
    `goodput: ${formatNumber(summary.goodput.requests_per_s, 2)} req/s (${summary.goodput.fraction === null ? '—' : `${(summary.goodput.fraction * 100).toFixed(1)}%`} of attempted${summary.goodput.slo ? `, SLO ${JSON.stringify(summary.goodput.slo)}` : ', no SLO'}); accepted-task rate ${summary.accepted_rate === null ? '—' : `${(summary.accepted_rate * 100).toFixed(1)}%`}`,
    `load: ${summary.load.mode}${summary.load.mode === 'closed' ? ` concurrency ${summary.load.concurrency}` : ` offered ${summary.load.offered} req/s, ${summary.load.slip_ms_p99 === null ? `max slip ${formatMs(summary.load.slip_ms_max)} (p99: n too small)` : `p99 slip ${formatMs(summary.load.slip_ms_p99)}`}`}, achieved ${formatNumber(summary.load.achieved, 2)} req/s`,
  ];
  const telemetry = summary.telemetry;
  if (telemetry) {
    const gpu = telemetry.gpu;
    lines.push(gpu
      ? `GPU ${gpu.name}: VRAM ${gpu.before_load_used_mib == null ? '' : `before load ${gpu.before_load_used_mib.toFixed(0)} MiB, `}baseline ${gpu.baseline_used_mib?.toFixed(0) ?? '—'} MiB, peak ${gpu.peak_used_mib?.toFixed(0) ?? '—'} MiB (server ${gpu.server_used_mib_peak?.toFixed(0) ?? '—'} MiB), utilization ${formatNumber(gpu.utilization_pct_mean)} %, power ${formatNumber(gpu.power_w_mean)} W${gpu.other_processes_vram_mib ? `; other processes held ${gpu.other_processes_vram_mib} MiB` : ''}`
      : `GPU: no GPU telemetry (${telemetry.gpu_unavailable_reason})`);
    if (telemetry.server_process) lines.push(`server process: CPU ${formatNumber(telemetry.server_process.cpu_pct_mean)} % mean, RSS peak ${telemetry.server_process.rss_peak_bytes === null ? '—' : `${(telemetry.server_process.rss_peak_bytes / 2 ** 20).toFixed(0)} MiB`}`);
    if (telemetry.server_metrics) lines.push(`server counters: ${telemetry.server_metrics.prompt_tokens ?? '—'} prompt tokens (${telemetry.server_metrics.cached_prompt_tokens ?? '—'} from cache), ${telemetry.server_metrics.predicted_tokens ?? '—'} predicted`);
    lines.push(`sampler: every ${telemetry.sampler.interval_ms} ms, ${telemetry.sampler.cpu_pct.toFixed(2)} % of one core`);
    const contention = telemetry.contention;
    if (contention?.contaminated) lines.push(`CONTAMINATED: ${contention.reason}`);
    else if (contention && contention.other_cpu_cores_mean !== null) lines.push(`competition: other processes ${contention.other_cpu_cores_mean.toFixed(2)} CPU cores on average (contaminated above ${contention.threshold_cpu_cores})`);
  }
  if (summary.load.note) lines.push(`NOTE: ${summary.load.note}`);
  if (Object.keys(u).length > 0) lines.push(`n too small: p90 needs n ≥ ${PERCENTILE_MIN_N.p90}, p95 n ≥ ${PERCENTILE_MIN_N.p95}, p99 n ≥ ${PERCENTILE_MIN_N.p99} (docs/METRICS.md)`);
  lines.push('Latencies are over successful requests; queue_ms is an estimate (TTFT minus server prefill); client_overhead_ms includes any wait for a free server slot.');
  process.stdout.write(`${lines.join("\n")}\n`);
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
