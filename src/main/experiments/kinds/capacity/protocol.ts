import type { CapacityProtocol } from '../../../../shared/contract/experiment-kinds/capacity';
import type { CapacityResult, CapacityStepResult, ConditionResult, ExperimentResult } from '../../../../shared/contract/experiments';
import type { MeasuredRequest } from '../../../../shared/contract/measurement';
import { SLO_METRICS, type RunSummary, type SloMetric, type SloSpec } from '../../../../shared/contract/runs';
import type { WorkloadDef } from '../../../workload/workload-types';
import { ErrorCode } from '../../../../shared/errors';
import { AppError, throwIfCancelled } from '../../../core/errors';
import { minimumRequestsToMeet, nearestRankPercentile } from '../../../metrics/quantile-slo';
import { measuredWindowMs } from '../../../metrics/run-summary';
import type { ManagedServer } from '../../../server/managed-server';
import { profileWithSlots } from '../../../runner/conversation-slots';
import { searchCapacity, type CapacitySearchSettings, type StepSample } from './search';
import { summarizeCondition } from '../../condition-summary';
import { runWindow, settleExperiment, type SingleModelExperimentInputs } from '../../experiment-inputs';
import type { WindowCooldown } from '../../window-cooldown';
import { CAPACITY_DEFAULTS } from '../../../../shared/experiment-defaults';

/**
 * A request's latency as the SLO judges it. In an open loop TTFT and end-to-end count from
 * the request's scheduled time, so a generator or queue that delays the send cannot hide the
 * wait. A failed request, or one that never produced the value, is above every limit; a
 * request too short to have a TPOT cannot break a TPOT limit.
 */
export function sloValue(request: MeasuredRequest, metric: SloMetric): number {
  if (request.error_class !== null) return Number.POSITIVE_INFINITY;
  const delay = request.scheduled_ms === null ? 0 : Math.max(0, request.t0_ms - request.scheduled_ms);
  if (metric === 'tpot_ms') {
    if (request.tpot_ms === null) return (request.output_tokens ?? 0) <= 1 ? 0 : Number.POSITIVE_INFINITY;
    return request.tpot_ms;
  }
  const value = request[metric];
  return value === null ? Number.POSITIVE_INFINITY : value + delay;
}

function loadName(by: CapacityResult['by'], load: number): string {
  return `${by}=${load}`;
}

/** Requests in one conversation of the workload, on average: a users look of n requests runs n / this conversations. */
function turnsPerConversation(def: WorkloadDef): number {
  const counts: number[] = [];
  for (const group of def.groups) {
    for (const item of group.items ?? []) if (item.turns) counts.push(item.turns.length);
    if (group.generate && 'conversations' in group.generate)
      counts.push(...Array<number>(group.generate.conversations.count).fill(group.generate.conversations.turns));
  }
  return counts.length === 0 ? 1 : counts.reduce((sum, turns) => sum + turns, 0) / counts.length;
}

type CapacityOptions = SingleModelExperimentInputs & {
  slo: SloSpec;
  percentile?: number;
  by: CapacityResult['by'];
  /** Requests per look; at least the number the percentile needs (raised to it otherwise). */
  requestsPerLook: number | null;
  start?: number;
  maxLoad?: number;
  keepCache?: boolean;
  signal?: AbortSignal;
  cooldown?: WindowCooldown | null;
  onStatus?: (line: string) => void;
};

/** The search's settings and the sample sizes its error control needs, with the rule in words for the record. */
function capacityPlan(options: CapacityOptions, metrics: SloMetric[]) {
  const percentile = options.percentile ?? CAPACITY_DEFAULTS.percentile;
  const bounds = CAPACITY_DEFAULTS[options.by];
  const settings: CapacitySearchSettings = {
    by: options.by,
    percentile,
    metrics,
    start: options.start ?? bounds.start,
    minLoad: bounds.minLoad,
    maxLoad: options.maxLoad ?? bounds.maxLoad,
    growth: CAPACITY_DEFAULTS.growth,
    relativeTolerance: CAPACITY_DEFAULTS.relativeTolerance,
    maxSteps: CAPACITY_DEFAULTS.maxSteps,
    maxLooks: CAPACITY_DEFAULTS.maxLooks,
    alpha: CAPACITY_DEFAULTS.alpha,
    invalidRetries: CAPACITY_DEFAULTS.invalidRetries,
  };
  const alphaPerLook = settings.alpha / (settings.maxSteps * settings.maxLooks);
  const fewest = minimumRequestsToMeet(percentile, alphaPerLook);
  const perLook = Math.max(options.requestsPerLook ?? 0, Math.ceil(fewest * CAPACITY_DEFAULTS.requestsPerLookFactor));
  // Conversations are meant to reuse their prefix: in users the cache is kept.
  const keepCache = options.keepCache || options.by === 'users';
  const baseProfile = keepCache ? options.profile : { ...options.profile, cacheRamMib: 0 };
  const conversationsPerLook = Math.ceil(perLook / turnsPerConversation(options.workload.def));
  const rule =
    `each look is ${perLook} requests; a load meets the SLOs when, for every limit, an exact one-sided binomial test shows ` +
    `the share of requests above it below ${(100 - percentile).toFixed(percentile % 1 === 0 ? 0 : 1)} % (the p${percentile} at or under the limit), ` +
    `and misses when one shows it above; each decision at α = ${settings.alpha} / (${settings.maxSteps} loads × ${settings.maxLooks} looks) = ${alphaPerLook.toPrecision(2)} ` +
    `(misses: divided again by ${metrics.length} limit${metrics.length === 1 ? '' : 's'}), so all of the search's decisions hold together with probability ≥ ${1 - settings.alpha}; ` +
    `${fewest} requests are the fewest with which a load can be shown to meet; failed requests count as above every limit; ` +
    `${options.by === 'rate' ? 'open-loop TTFT and e2e count from the scheduled time; ' : ''}` +
    `${options.by === 'users' ? `a users look is ${conversationsPerLook} conversations (about ${perLook} requests), every turn judged, and the server gets a slot per user; ` : ''}` +
    `a sample where the client fell behind (the generator's schedule slipped, or its own event loop was saturated or stalled), or where other processes competed for the machine (the contention sampler), is measured again (up to ${settings.invalidRetries} times, then the load is unmeasurable), never counted as a miss`;
  return { percentile, settings, alphaPerLook, fewest, perLook, keepCache, baseProfile, conversationsPerLook, rule };
}

interface LoadSamples {
  runIds: string[];
  rows: MeasuredRequest[];
  goodput: (number | null)[];
  throughput: (number | null)[];
  achieved: (number | null)[];
  slip: (number | null)[];
}

const meanOfKnown = (values: (number | null)[]) => {
  const known = values.filter((value): value is number => value !== null);
  return known.length === 0 ? null : known.reduce((sum, value) => sum + value, 0) / known.length;
};

/** One searched load as the result reports it: the decision, the pooled percentiles and the rates. */
function stepResult(
  step: Awaited<ReturnType<typeof searchCapacity>>['steps'][number],
  entry: LoadSamples | undefined,
  metrics: SloMetric[],
  slo: SloSpec,
  percentile: number,
): CapacityStepResult {
  const rows = entry?.rows ?? [];
  const good = rows.filter((row) => meetsEverySlo(row, metrics, slo)).length;
  return {
    load: step.load,
    phase: step.phase,
    decision: step.decision,
    looks: step.looks,
    requests: step.n,
    violations: step.violations,
    percentile_ms: Object.fromEntries(
      metrics.map((metric) => [
        metric,
        finiteOrNull(
          nearestRankPercentile(
            rows.map((row) => sloValue(row, metric)),
            percentile,
          ),
        ),
      ]),
    ),
    failed: rows.filter((row) => row.error_class !== null).length,
    good_fraction: rows.length === 0 ? null : good / rows.length,
    goodput_requests_per_s: meanOfKnown(entry?.goodput ?? []),
    throughput_requests_per_s: meanOfKnown(entry?.throughput ?? []),
    achieved_load: meanOfKnown(entry?.achieved ?? []),
    slip_ms: meanOfKnown(entry?.slip ?? []),
    client_bound_samples: step.invalidSamples - step.contaminatedSamples,
    contaminated_samples: step.contaminatedSamples,
    invalid_reason: step.invalidReason,
    run_ids: entry?.runIds ?? [],
  };
}

/** The experiment's answer: the capacity with its interval, the knee, each measured load as a condition, and the recommendation. */
function capacityExperimentResult(input: {
  options: CapacityOptions;
  experimentId: string;
  protocol: CapacityProtocol;
  plan: ReturnType<typeof capacityPlan>;
  metrics: SloMetric[];
  outcome: Awaited<ReturnType<typeof searchCapacity>>;
  steps: CapacityStepResult[];
}): ExperimentResult {
  const { options, experimentId, protocol, metrics, outcome, steps } = input;
  const { percentile, settings, alphaPerLook, perLook, fewest, rule } = input.plan;
  const capacity = outcome.capacity;
  const interval =
    capacity === null
      ? null
      : { low: capacity, high: outcome.lowestMiss !== null && outcome.lowestMiss > capacity ? outcome.lowestMiss : null };
  const knee = kneeOf(steps, metrics[0]!);
  const unit = options.by === 'rate' ? 'req/s' : options.by === 'users' ? 'concurrent users' : 'concurrent requests';
  const capacityResult: CapacityResult = {
    by: options.by,
    unit,
    percentile,
    slo: options.slo,
    alpha: settings.alpha,
    alpha_per_look: alphaPerLook,
    requests_per_look: perLook,
    min_requests_to_meet: fewest,
    rule,
    capacity,
    interval,
    knee,
    knee_rule: `the lowest load whose p${percentile} ${metrics[0]} is at least twice that of the lowest load measured`,
    stopped: outcome.stopped,
    steps,
  };
  const conditions: ConditionResult[] = steps
    .filter((step) => step.run_ids.length > 0)
    .sort((a, b) => a.load - b.load)
    .map((step) => ({
      ...summarizeCondition(options.runs, loadName(options.by, step.load), step.run_ids).result,
      goodput_requests_per_s: step.goodput_requests_per_s,
      goodput_fraction: step.good_fraction,
      meets_slo: step.decision === 'meets' ? true : step.decision === 'misses' ? false : null,
    }));
  const result: ExperimentResult = {
    experiment_id: experimentId,
    kind: 'capacity',
    status: 'completed',
    protocol,
    conditions,
    verdicts: [],
    recommendation: {
      choice: capacity === null ? null : `${loadName(options.by, capacity)}`,
      reason:
        capacity === null
          ? `No load was shown to meet the SLOs at p${percentile}: ${outcome.stopped}.`
          : `${capacity} ${unit} is the highest load shown to meet ${metrics.map((metric) => `${metric} ≤ ${options.slo[metric]} ms`).join(' and ')} at p${percentile}` +
            (interval?.high
              ? `; the limit lies between ${capacity} and ${interval.high} ${unit} (${Math.round((1 - settings.alpha) * 100)} % confidence)`
              : '; no load was shown to miss') +
            `. The search stopped because ${outcome.stopped}.`,
      excluded: [],
    },
    capacity: capacityResult,
  };
  return result;
}

/**
 * The highest load a model serves while every SLO holds at a percentile (`inferlab experiment
 * capacity`). One server runs every step, its prompt cache emptied before each sample (and
 * its host-memory cache off) unless the workload is meant to reuse prefixes; each sample is
 * one run, open loop at a Poisson rate or closed loop at a concurrency. The search and its
 * error control are in search.ts.
 */
export async function runCapacity(options: CapacityOptions): Promise<ExperimentResult> {
  const metrics = SLO_METRICS.filter((metric) => options.slo[metric] !== undefined);
  if (metrics.length === 0)
    throw new AppError(ErrorCode.InvalidInput, 'capacity needs an SLO: --slo ttft=MS,tpot=MS (ttft, tpot and e2e limits)');
  const plan = capacityPlan(options, metrics);
  const { percentile, settings, perLook, keepCache, baseProfile, conversationsPerLook, rule } = plan;
  const protocol: CapacityProtocol = {
    kind: 'capacity',
    cooldown: options.cooldown?.describe() ?? null,
    model: options.model.ref,
    workload: options.workload.def.name,
    by: options.by,
    percentile,
    slo: options.slo,
    requests_per_look: perLook,
    search: { ...settings, metrics: [...metrics] },
    prompt_cache: keepCache ? 'kept between steps (the workload reuses prefixes)' : 'emptied before every sample; host-memory cache off',
    profile: baseProfile,
    rule,
  };
  const experimentId = options.experiments.create('capacity', protocol);
  const samples = new Map<number, LoadSamples>();
  let server: ManagedServer | null = null;
  try {
    return await settleExperiment(options, experimentId, async () => {
      let slots = baseProfile.parallelSlots;
      const startServer = async (parallelSlots: number) => {
        await server?.stop();
        const profile = profileWithSlots(baseProfile, parallelSlots);
        server = await options.servers.prepare({ modelRef: options.model.ref, profile });
        const ready = await server.start();
        if (ready.state !== 'ready')
          throw new AppError(
            ErrorCode.ServerStartFailed,
            `the server did not start with ${parallelSlots} slot(s) of ${profile.contextSize / parallelSlots} tokens (context ${profile.contextSize}): ${ready.fault?.message}`,
          );
        slots = parallelSlots;
      };
      await startServer(baseProfile.parallelSlots);
      const measure = async (load: number, look: number): Promise<StepSample> => {
        throwIfCancelled(options.signal);
        options.onStatus?.(`${loadName(options.by, load)}: look ${look + 1}, ${perLook} requests`);
        // Each user keeps a slot for their conversation: more users than slots restarts the server with one per user.
        if (options.by === 'users' && load > slots) await startServer(load);
        if (!keepCache) await server!.erasePromptCache();
        await options.cooldown?.beforeWindow(options.onStatus);
        const { summary } = await runWindow(
          options,
          { experimentId, condition: loadName(options.by, load), window: look },
          {
            target: { kind: 'server', server: server!, modelRef: options.model.ref, modelPath: options.model.path },
            // Never blocked by an outstanding cap: a send held back by the client would read as client-bound, not as the server's queue.
            load:
              options.by === 'rate'
                ? { mode: 'open', rate: load, burstiness: 1, maxOutstanding: perLook + 2, seed: lookSeed(load, look) }
                : { mode: 'closed', concurrency: load },
            stop: { requests: options.by === 'users' ? conversationsPerLook : perLook, durationMs: null },
            warmup: 2,
            slo: options.slo,
          },
        );
        const rows = options.runs.measuredRequests(summary.run_id).filter((row) => !row.warmup);
        return countSample(options, metrics, load, summary, rows, samples);
      };
      const outcome = await searchCapacity(settings, measure);

      const steps = outcome.steps.map((step) => stepResult(step, samples.get(step.load), metrics, options.slo, percentile));
      return capacityExperimentResult({ options, experimentId, protocol, plan, metrics, outcome, steps });
    });
  } finally {
    // Assigned inside startServer, which the compiler cannot follow.
    await (server as ManagedServer | null)?.stop();
  }
}

/** A fresh Poisson schedule for every look (pooled looks must be independent samples), the same on every rerun. */
const lookSeed = (load: number, look: number) => 1 + look * 1_000_003 + Math.round(load * 1000);

const finiteOrNull = (value: number | null) => (value !== null && Number.isFinite(value) ? value : null);

function meetsEverySlo(row: MeasuredRequest, metrics: readonly SloMetric[], slo: SloSpec): boolean {
  return metrics.every((metric) => sloValue(row, metric) <= slo[metric]!);
}

/**
 * Requests per second that met every SLO as capacity judges them (from the scheduled time),
 * over the sample's measured window. The run summary's goodput also requires acceptance and
 * judges from the send, so it is not the figure a capacity step reports.
 */
export function goodputWithinSlo(rows: readonly MeasuredRequest[], metrics: readonly SloMetric[], slo: SloSpec): number | null {
  const windowMs = measuredWindowMs(rows);
  if (windowMs === null) return null;
  return rows.filter((row) => meetsEverySlo(row, metrics, slo)).length / (windowMs / 1000);
}

/** Where latency turns up: the lowest load whose percentile is at least twice the lowest load's. */
export function kneeOf(steps: readonly CapacityStepResult[], metric: string): number | null {
  const measured = steps
    .filter((step) => step.percentile_ms[metric] !== null && step.percentile_ms[metric] !== undefined)
    .sort((a, b) => a.load - b.load);
  const base = measured[0]?.percentile_ms[metric];
  if (base === undefined || base === null) return null;
  return measured.find((step) => step.percentile_ms[metric]! >= 2 * Math.max(base, 1e-9))?.load ?? null;
}

/**
 * One look's sample as the search counts it: set aside when the client fell behind or other
 * processes competed (the search measures it again), else kept for the step's figures and its
 * SLO violations counted.
 */
function countSample(
  options: CapacityOptions,
  metrics: readonly SloMetric[],
  load: number,
  summary: RunSummary,
  rows: MeasuredRequest[],
  samples: Map<number, LoadSamples>,
): StepSample {
  const entry = samples.get(load) ?? { runIds: [], rows: [], goodput: [], throughput: [], achieved: [], slip: [] };
  samples.set(load, entry);
  if (summary.load.client_bound) {
    options.onStatus?.(`${loadName(options.by, load)}: ${summary.load.note ?? 'the client fell behind'}; measured again, not counted`);
    return { n: rows.length, violations: {}, clientBound: true };
  }
  if (summary.telemetry?.contention?.contaminated) {
    options.onStatus?.(`${loadName(options.by, load)}: ${summary.telemetry.contention.reason}; measured again, not counted`);
    return { n: rows.length, violations: {}, clientBound: false, contaminated: true };
  }
  entry.runIds.push(summary.run_id);
  entry.rows.push(...rows);
  entry.goodput.push(goodputWithinSlo(rows, metrics, options.slo));
  entry.throughput.push(summary.throughput.requests_per_s);
  entry.achieved.push(summary.load.achieved);
  entry.slip.push(summary.load.slip_ms_p99 ?? summary.load.slip_ms_max);
  const violations = Object.fromEntries(
    metrics.map((metric) => [metric, rows.filter((row) => sloValue(row, metric) > options.slo[metric]!).length]),
  );
  return { n: rows.length, violations, clientBound: false };
}
