import type { StartRunSpec } from '../../shared/contract';
import { SLO_METRICS, type SloSpec } from '../../shared/contract/runs';
import { namesInWords } from '../../shared/metric-table';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import type { LoadSpec } from '../runner/load-generator';
import type { RunRequest } from '../runner/run-workload';
import { readWorkloadFile } from '../workload/read-workload';
import type { WorkloadDef } from '../workload/workload-types';
import { generatorFilesWithin, resolveModelWithin, workloadPathWithin, type ServiceAccess } from './access';

/** Defaults a run gets when the spec leaves a field out. */
/** Stream shards a run may ask for: one worker thread each. */
export const MAX_SHARDS = 64;

export const RUN_DEFAULTS = { concurrency: 1, burstiness: 1, maxOutstanding: 256, firstTokenTimeoutS: 120, timeoutS: 600 } as const;

/** A run spec checked against the face's rights, with everything resolved that needs no database. */
export interface CheckedRun {
  request: Omit<RunRequest, 'target' | 'referenceRunId'>;
  target: { kind: 'model'; modelRef: string; modelPath: string } | { kind: 'endpoint'; url: string; headers: Record<string, string> };
}

function invalid(message: string): never {
  throw new AppError(ErrorCode.InvalidInput, message);
}

function positiveOrNull(name: string, value: number | null | undefined, integer: boolean): number | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value)))
    invalid(`${name} must be a positive ${integer ? 'integer' : 'number'}, got ${JSON.stringify(value)}`);
  return value;
}

function checkSlo(slo: SloSpec | null | undefined): SloSpec | null {
  if (slo === null || slo === undefined) return null;
  if (typeof slo !== 'object') invalid('slo must be an object like {"ttft_ms": 500}');
  for (const [key, limit] of Object.entries(slo)) {
    if (!(SLO_METRICS as readonly string[]).includes(key)) invalid(`slo has no field ${key}; use ${namesInWords(SLO_METRICS)}`);
    positiveOrNull(`slo ${key}`, limit as number, false);
  }
  return slo;
}

function endpointUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    invalid(`endpoint must be an http(s) URL of the server root, got ${JSON.stringify(raw)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    invalid(`endpoint must be an http(s) URL of the server root, got ${JSON.stringify(raw)}`);
  return url.toString().replace(/\/$/, '').replace(/\/v1$/, '');
}

/**
 * The one check of a run spec, for every face: the CLI calls it before it opens the database
 * (so a mistake writes nothing), the service again before it starts the job. Paths, the key
 * variable and the metrics URL are held to what the face may reach.
 */
export async function checkRunSpec(spec: StartRunSpec, access: ServiceAccess): Promise<CheckedRun> {
  const shape = checkRunShape(spec);
  const file = await workloadPathWithin(access, spec.workload);
  // Generator files by the real location checked, which is what the run then reads.
  const def = await generatorFilesWithin(access, withTraceOptions(await readWorkloadFile(file), spec.trace ?? null), file);
  if (spec.rampUpS != null && replaysTrace(def)) invalid('a trace replays its own arrival times: a ramp-up does not apply to it');
  let target: CheckedRun['target'];
  if (spec.model) {
    target = { kind: 'model', modelRef: spec.model, modelPath: await resolveModelWithin(access, spec.model) };
  } else {
    access.checkEndpoint(shape.endpoint!);
    target = { kind: 'endpoint', url: shape.endpoint!, headers: access.endpointHeaders(shape.endpoint!, spec.apiKeyEnv ?? null) };
  }
  // Over RPC the app fetches only from the endpoint's own host: a request cannot make it probe others.
  if (
    shape.metricsUrl &&
    access.face === 'rpc' &&
    (target.kind !== 'endpoint' || new URL(shape.metricsUrl).origin !== new URL(target.url).origin)
  ) {
    throw new AppError(ErrorCode.Forbidden, "over RPC, metricsUrl must be on the endpoint's own host");
  }
  // A GPU exporter listens on its own port of the machine that serves: over RPC, only the endpoint's host.
  if (
    shape.gpuMetricsUrl &&
    access.face === 'rpc' &&
    (target.kind !== 'endpoint' || new URL(shape.gpuMetricsUrl).hostname !== new URL(target.url).hostname)
  ) {
    throw new AppError(
      ErrorCode.Forbidden,
      "over RPC, gpuMetricsUrl must be on the endpoint's own host (any port); for other hosts use inferlab run --gpu-metrics-url",
    );
  }
  return { target, request: { ...shape.request, workload: { def, file } } };
}

const replaysTrace = (def: WorkloadDef) => def.groups.some((group) => group.generate && 'trace' in group.generate);

/** Applies a run's trace options to the trace generator of its workload; refuses them for any other workload. */
function withTraceOptions(def: WorkloadDef, trace: StartRunSpec['trace']): WorkloadDef {
  if (!trace) return def;
  if (!replaysTrace(def))
    invalid('trace options (speed, window, block tokens) need a trace: a .jsonl file or a workload with a trace generator');
  const speed = positiveOrNull('trace speed', trace.speed, false);
  const blockTokens = positiveOrNull('trace block tokens', trace.blockTokens, true);
  const startS = trace.startS ?? null;
  if (startS !== null && (typeof startS !== 'number' || !Number.isFinite(startS) || startS < 0))
    invalid(`the trace window's start must be seconds ≥ 0, got ${JSON.stringify(startS)}`);
  const endS = positiveOrNull("the trace window's end", trace.endS, false);
  if (startS !== null && endS !== null && endS <= startS) invalid(`the trace window ends (${endS} s) before it starts (${startS} s)`);
  return {
    ...def,
    groups: def.groups.map((group) =>
      group.generate && 'trace' in group.generate
        ? {
            ...group,
            generate: {
              trace: {
                ...group.generate.trace,
                ...(speed === null ? {} : { speed }),
                ...(blockTokens === null ? {} : { block_tokens: blockTokens }),
                ...(startS === null ? {} : { start_s: startS }),
                ...(endS === null ? {} : { end_s: endS }),
              },
            },
          }
        : group,
    ),
  };
}

/** An http(s) URL, normalized; anything else (file:, data:, no scheme) is refused naming the field. */
function httpUrl(field: string, value: string): string {
  let url: URL | null = null;
  try {
    url = new URL(value);
  } catch {
    // refused below
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:'))
    invalid(`${field} must be an http(s) URL such as http://gpu-host:9400/metrics, got ${JSON.stringify(value)}`);
  return url.toString();
}

/** The checks that need no file, database or server: field types, ranges and combinations. */
export function checkRunShape(spec: StartRunSpec): {
  request: Omit<CheckedRun['request'], 'workload'>;
  endpoint: string | null;
  metricsUrl: string | null;
  gpuMetricsUrl: string | null;
} {
  if (typeof spec !== 'object' || spec === null) invalid('a run spec must be an object');
  if (typeof spec.workload !== 'string' || spec.workload === '') invalid('workload is required');
  if (!spec.model === !spec.endpoint) invalid('give a model or an endpoint, not both');
  if (spec.concurrency != null && spec.rate != null) invalid('concurrency (closed loop) and rate (open loop) exclude each other');
  if (spec.rate == null && (spec.burstiness != null || spec.maxOutstanding != null || spec.shards != null))
    invalid('burstiness, maxOutstanding and shards need a rate (open loop)');
  const shards = positiveOrNull('shards', spec.shards, true);
  if (shards !== null && shards > MAX_SHARDS)
    invalid(`shards must be at most ${MAX_SHARDS} (one worker thread each; more than the cores only adds switching), got ${shards}`);
  if (spec.requests != null && spec.durationS != null) invalid('requests and duration exclude each other');
  const rate = positiveOrNull('rate', spec.rate, false);
  const rampUpS = positiveOrNull('rampUpS', spec.rampUpS, false);
  if (spec.rampShape != null && rampUpS === null) invalid('rampShape needs rampUpS (the ramp-up seconds)');
  if (spec.rampShape != null && spec.rampShape !== 'linear' && spec.rampShape !== 'exponential')
    invalid(`rampShape must be linear or exponential, got ${JSON.stringify(spec.rampShape)}`);
  const rampUp = rampUpS === null ? {} : { rampUp: { shape: spec.rampShape ?? 'linear', ms: rampUpS * 1000 } };
  const load: LoadSpec =
    rate !== null
      ? {
          mode: 'open',
          rate,
          burstiness: positiveOrNull('burstiness', spec.burstiness, false) ?? RUN_DEFAULTS.burstiness,
          maxOutstanding: positiveOrNull('maxOutstanding', spec.maxOutstanding, true) ?? RUN_DEFAULTS.maxOutstanding,
          ...(shards !== null && shards > 1 ? { shards } : {}),
          ...rampUp,
        }
      : { mode: 'closed', concurrency: positiveOrNull('concurrency', spec.concurrency, true) ?? RUN_DEFAULTS.concurrency, ...rampUp };
  const requests = positiveOrNull('requests', spec.requests, true);
  const durationS = positiveOrNull('duration', spec.durationS, false);
  if (!Number.isInteger(spec.warmup) || spec.warmup < 0) invalid(`warmup must be a whole number ≥ 0, got ${JSON.stringify(spec.warmup)}`);
  const timeouts = {
    firstTokenMs: (positiveOrNull('firstTokenTimeoutS', spec.firstTokenTimeoutS, false) ?? RUN_DEFAULTS.firstTokenTimeoutS) * 1000,
    totalMs: (positiveOrNull('timeoutS', spec.timeoutS, false) ?? RUN_DEFAULTS.timeoutS) * 1000,
  };
  const slo = checkSlo(spec.slo);
  if (spec.settings != null && (!Array.isArray(spec.settings) || spec.settings.some((setting) => typeof setting !== 'string')))
    invalid('settings must be a list of FIELD=VALUE strings');

  const endpoint = spec.endpoint ? endpointUrl(spec.endpoint) : null;
  const metricsUrl = spec.metricsUrl ? httpUrl('metricsUrl', spec.metricsUrl) : null;
  const gpuMetricsUrl = spec.gpuMetricsUrl ? httpUrl('gpuMetricsUrl', spec.gpuMetricsUrl) : null;
  return {
    endpoint,
    metricsUrl,
    gpuMetricsUrl,
    request: {
      metricsUrl,
      gpuMetricsUrl,
      load,
      stop: { requests, durationMs: durationS === null ? null : durationS * 1000 },
      warmup: spec.warmup,
      slo,
      timeouts,
      private: Boolean(spec.private),
    },
  };
}
