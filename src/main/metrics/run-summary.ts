import {
  METRIC_NAMES,
  SLO_METRICS,
  type ClientLoad,
  type GroupSummary,
  type LoadDescription,
  type MetricName,
  type ReasoningSummary,
  type ToolCallSummary,
  type ExchangeSummary,
  type RequestCounts,
  type SpeculativeSummary,
  type RunSummary,
  type SloSpec,
  type TurnMetric,
  type TurnSummary,
} from '../../shared/contract/runs';
import { metricsShownIn } from '../../shared/metric-columns';
import { isPerRequest } from '../../shared/metric-table';
import type { TelemetrySummary } from '../../shared/contract/telemetry';
import { PERCENTILE_MIN_N } from '../../shared/experiment-defaults';
import type { MeasuredRequest } from '../../shared/contract/measurement';
import { bunchedDelivery } from './bunched-delivery';
import { clientBehindReason } from './client-behind';
import { withEnergyPerWork } from '../telemetry/window-energy';
import { steadyStateCheck, type SteadyStateCheck } from './steady-state';
import { summarize, type Distribution } from './distribution';
import { gapDistributions } from './gap-distributions';

export type { LoadDescription, RunSummary, SloSpec };

function isSuccess(row: MeasuredRequest): boolean {
  return row.error_class === null;
}

function meetsSlo(row: MeasuredRequest, slo: SloSpec | null): boolean {
  if (!slo) return true;
  for (const key of SLO_METRICS) {
    const limit = slo[key];
    if (limit === undefined) continue;
    const value = row[key];
    // A request too short to have a TPOT cannot violate a TPOT SLO.
    if (value === null) {
      if (key === 'tpot_ms' && (row.output_tokens ?? 0) <= 1) continue;
      return false;
    }
    if (value > limit) return false;
  }
  return true;
}

function counts(rows: readonly MeasuredRequest[]): RequestCounts {
  const failures: Record<string, number> = {};
  let completed = 0;
  let accepted = 0;
  let checked = 0;
  for (const row of rows) {
    if (isSuccess(row)) completed += 1;
    else failures[row.error_class!] = (failures[row.error_class!] ?? 0) + 1;
    if (row.accepted !== null) checked += 1;
    if (isSuccess(row) && row.accepted !== false) accepted += 1;
  }
  return { attempted: rows.length, completed, failed: rows.length - completed, accepted, checked, failures_by_class: failures };
}

/** The chunk offsets of each group's successful requests, for the inter-token gaps. */
function itlByGroup(groups: readonly (readonly MeasuredRequest[])[]): { run: Distribution; groups: Distribution[] } {
  return gapDistributions(
    groups.map((rows) => rows.filter(isSuccess).flatMap((row) => (row.chunk_offsets_ms ? [row.chunk_offsets_ms] : []))),
  );
}

function distributions(rows: readonly MeasuredRequest[], itl: Distribution): Record<MetricName, Distribution> {
  const ok = rows.filter(isSuccess);
  const pick = (key: Exclude<MetricName, 'itl_ms'>) => ok.map((row) => row[key]).filter((value): value is number => value !== null);
  return {
    ttft_ms: summarize(pick('ttft_ms')),
    tpot_ms: summarize(pick('tpot_ms')),
    itl_ms: itl,
    e2e_ms: summarize(pick('e2e_ms')),
    queue_ms: summarize(pick('queue_ms')),
    client_overhead_ms: summarize(pick('client_overhead_ms')),
  };
}

/** From the first measured send to the last end: the span every per-second figure divides by. */
export function measuredWindowMs(rows: readonly MeasuredRequest[]): number | null {
  let start = Number.POSITIVE_INFINITY;
  let end = Number.NEGATIVE_INFINITY;
  for (const row of rows) {
    start = Math.min(start, row.t0_ms);
    if (row.end_ms !== null) end = Math.max(end, row.end_ms);
  }
  const span = end - start;
  return Number.isFinite(span) && span > 0 ? span : null;
}

export const perSecond = (count: number, windowMs: number | null) => (windowMs === null ? null : count / (windowMs / 1000));

const values = (rows: readonly MeasuredRequest[], pick: (row: MeasuredRequest) => number | null | undefined) =>
  rows.map(pick).filter((value): value is number => value !== null && value !== undefined);

/**
 * The rate requests were sent at. Open loop: n sends span n − 1 gaps, so (n − 1) over the
 * first-to-last send span, which leaves out the drain after the last send (throughput
 * includes it; the offered rate never did). Closed loop: attempted over the measured window.
 */
function achievedRate(mode: LoadDescription['mode'], rows: readonly MeasuredRequest[], windowMs: number | null): number | null {
  if (mode === 'closed') return perSecond(rows.length, windowMs);
  if (rows.length < 2) return null;
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  for (const row of rows) {
    first = Math.min(first, row.t0_ms);
    last = Math.max(last, row.t0_ms);
  }
  return last > first ? perSecond(rows.length - 1, last - first) : null;
}

/**
 * Drafted and accepted tokens over the successful requests. A request without counts is left
 * out of the totals (llama-server reports them only where it drafted), never counted as 0.
 */
export function speculativeSummary(ok: readonly MeasuredRequest[]): SpeculativeSummary | null {
  const drafted = ok.filter((row) => row.draft_tokens != null && row.draft_accepted_tokens != null);
  if (drafted.length === 0) return null;
  const draftedTokens = drafted.reduce((sum, row) => sum + row.draft_tokens!, 0);
  const acceptedTokens = drafted.reduce((sum, row) => sum + row.draft_accepted_tokens!, 0);
  return {
    requests_with_draft: drafted.length,
    requests_without_draft: ok.length - drafted.length,
    drafted_tokens: draftedTokens,
    accepted_tokens: acceptedTokens,
    acceptance_rate: draftedTokens === 0 ? null : acceptedTokens / draftedTokens,
    acceptance_rate_per_request: summarize(
      drafted.filter((row) => row.draft_tokens! > 0).map((row) => row.draft_accepted_tokens! / row.draft_tokens!),
    ),
  };
}

/**
 * Why a run that asked for a draft model has no speculative figures: not one successful request
 * long enough to draft reported draft counts, so drafting never happened (a build or model that
 * ignored the draft). Recording it as a plain run would present it as a speculative one.
 */
export function missingDraftReason(draftModel: string, rows: readonly MeasuredRequest[]): string | null {
  const couldDraft = rows.filter((row) => !row.warmup && isSuccess(row) && (row.output_tokens ?? 0) > 1);
  if (couldDraft.length === 0 || couldDraft.some((row) => row.draft_tokens != null)) return null;
  return `the server was asked to draft with ${draftModel}, but none of the ${couldDraft.length} successful requests reported draft counts (timings.draft_n): speculative decoding did not run`;
}

/** Reasoning timings and lengths over the successful requests that streamed reasoning. */
function reasoningSummary(ok: readonly MeasuredRequest[]): ReasoningSummary | null {
  const withReasoning = ok.filter((row) => (row.reasoning_chars ?? 0) > 0 || (row.ttfr_ms ?? null) !== null);
  if (withReasoning.length === 0) return null;
  const uncounted = withReasoning.filter((row) => (row.reasoning_tokens ?? null) === null);
  return {
    requests_with_reasoning: withReasoning.length,
    ttfr_ms: summarize(values(withReasoning, (row) => row.ttfr_ms)),
    ttfa_ms: summarize(values(withReasoning, (row) => row.ttfa_ms)),
    tokens: summarize(values(withReasoning, (row) => row.reasoning_tokens)),
    tokens_uncounted: uncounted.length,
    tokens_uncounted_reason:
      uncounted.length === 0 ? null : (uncounted.find((row) => row.reasoning_tokens_note)?.reasoning_tokens_note ?? 'not counted'),
  };
}

/** Function calls over the successful requests that offered tools (each carries its judged counts). */
function toolCallSummary(measured: readonly MeasuredRequest[], ok: readonly MeasuredRequest[]): ToolCallSummary | null {
  const offered = ok.filter((row) => (row.tool_calls ?? null) !== null);
  if (offered.length === 0) return null;
  const calling = offered.filter((row) => row.tool_calls! > 0);
  const calls = calling.reduce((sum, row) => sum + row.tool_calls!, 0);
  const valid = calling.reduce((sum, row) => sum + (row.tool_calls_valid ?? 0), 0);
  return {
    requests: offered.length,
    requests_with_calls: calling.length,
    calls,
    valid_calls: valid,
    valid_share: calls === 0 ? null : valid / calls,
    ttfc_ms: summarize(values(calling, (row) => row.ttfc_ms)),
    tool_call_ms: summarize(values(calling, (row) => row.tool_call_ms)),
    argument_tokens: summarize(values(calling, (row) => row.tool_argument_tokens)),
    ...exchangesOf(measured),
  };
}

/** Agent exchanges among the measured requests: steps that offered tools and belong to a send of several. */
function exchangesOf(measured: readonly MeasuredRequest[]): { exchanges?: ExchangeSummary } {
  const bySend = new Map<number, MeasuredRequest[]>();
  for (const row of measured) {
    if ((row.conversation ?? null) === null || (row.turn ?? null) === null) continue;
    const steps = bySend.get(row.conversation!) ?? [];
    steps.push(row);
    bySend.set(row.conversation!, steps);
  }
  const exchanges = [...bySend.values()].filter((steps) => steps.some((step) => (step.tool_calls ?? null) !== null));
  if (exchanges.length === 0) return {};
  const lastOf = (steps: MeasuredRequest[]) => steps.reduce((last, step) => (step.turn! > last.turn! ? step : last));
  const whole = exchanges.filter((steps) => steps.every(isSuccess));
  return {
    exchanges: {
      count: exchanges.length,
      answered: exchanges.filter((steps) => isSuccess(lastOf(steps)) && lastOf(steps).tool_calls === 0).length,
      steps: summarize(exchanges.map((steps) => steps.length)),
      e2e_ms: summarize(
        whole.map((steps) => {
          const first = steps.reduce((earliest, step) => (step.t0_ms < earliest.t0_ms ? step : earliest));
          const last = lastOf(steps);
          return last.t0_ms + last.e2e_ms! - first.t0_ms;
        }),
      ),
    },
  };
}

const withToolCalls = (summary: ToolCallSummary | null) => (summary ? { tool_calls: summary } : {});

/** llama-server reports no queue time: beyond its slots, the wait for one lands in client_overhead_ms. */
function slotWaitNote(load: LoadDescription, slots: number | null): string | null {
  const outstanding = load.mode === 'closed' ? (load.concurrency ?? null) : (load.max_outstanding ?? null);
  if (slots === null || outstanding === null || outstanding <= slots) return null;
  const what = load.mode === 'closed' ? `concurrency ${outstanding}` : `up to ${outstanding} outstanding requests`;
  return `${what} against ${slots} server slot${slots === 1 ? '' : 's'}: requests waited for a free slot, and that wait is in client_overhead_ms (and in ttft_ms and e2e_ms)`;
}

/**
 * The run summary of the measurement contract (docs/METRICS.md), computed from the stored requests
 * (so a finished, aborted or interrupted run is summarized the same way). Warmup requests
 * are excluded everywhere; failures stay in every denominator.
 */
export function summarizeRun(input: {
  runId: string;
  status: string;
  statusReason: string | null;
  workload: { name: string | null; revision: string | null };
  rows: readonly MeasuredRequest[];
  load: LoadDescription;
  slo: SloSpec | null;
  telemetry?: TelemetrySummary | null;
  /** The server's slot count (llama-server /props total_slots), when known. */
  serverSlots?: number | null;
  /** The measuring process's own load over the window, when it was watched. */
  clientLoad?: ClientLoad | null;
}): RunSummary {
  const measured = input.rows.filter((row) => !row.warmup);
  const windowMs = measuredWindowMs(measured);
  const requestCounts = counts(measured);
  const groupNames = [...new Set(measured.map((row) => row.group_name ?? 'default'))];
  const groupRows = new Map(groupNames.map((name) => [name, measured.filter((row) => (row.group_name ?? 'default') === name)]));
  // ITL samples run to millions: they are streamed from the stored offsets, never gathered (metrics/gap-distributions.ts).
  const itl = itlByGroup(groupNames.map((name) => groupRows.get(name)!));
  const oneGroup = groupNames.length === 1;
  const groupMetrics = new Map(
    oneGroup ? [] : groupNames.map((name, index) => [name, distributions(groupRows.get(name)!, itl.groups[index]!)]),
  );
  const metrics = distributions(measured, itl.run);
  const ok = measured.filter(isSuccess);
  const outputTotal = ok.reduce((sum, row) => sum + (row.output_tokens ?? 0), 0);
  const promptTotal = ok.reduce((sum, row) => sum + (row.prompt_tokens ?? 0), 0);
  const good = measured.filter((row) => isSuccess(row) && row.accepted !== false && meetsSlo(row, input.slo)).length;
  const withinSlo = measured.filter((row) => isSuccess(row) && meetsSlo(row, input.slo)).length;

  const groups = Object.fromEntries(
    groupNames.map((name) => [name, groupSummary(groupRows.get(name)!, groupMetrics.get(name) ?? metrics, input.slo)]),
  );

  const { load, scheduleLatency } = loadSummary(input.load, measured, windowMs, input.clientLoad ?? null);
  const serverSlots = input.serverSlots ?? null;
  const turns = turnSummaries(measured);

  return {
    run_id: input.runId,
    status: input.status,
    status_reason: input.statusReason,
    workload: input.workload,
    requests: requestCounts,
    warmup_requests: input.rows.length - measured.length,
    metrics,
    measurement: measurementOf(metrics, windowMs, input.load, serverSlots),
    throughput: {
      requests_per_s: perSecond(requestCounts.completed, windowMs),
      output_tokens_per_s: perSecond(outputTotal, windowMs),
      total_tokens_per_s: perSecond(outputTotal + promptTotal, windowMs),
      output_tokens_total: outputTotal,
    },
    goodput: {
      slo: input.slo,
      requests_per_s: perSecond(good, windowMs),
      fraction: measured.length === 0 ? null : good / measured.length,
      within_slo_fraction: measured.length === 0 ? null : withinSlo / measured.length,
    },
    accepted_rate: measured.length === 0 ? null : requestCounts.accepted / measured.length,
    groups,
    load,
    schedule_latency: scheduleLatency,
    reasoning: reasoningSummary(ok),
    // Absent rather than null where no request offered tools, so summaries of other runs keep their shape.
    ...withToolCalls(toolCallSummary(measured, ok)),
    speculative: speculativeSummary(ok),
    cache: { cached_prompt_tokens: ok.reduce((sum, row) => sum + (row.cached_tokens ?? 0), 0), prompt_tokens: promptTotal },
    telemetry: withWorkRatios(input.telemetry ?? null, requestCounts.completed, outputTotal),
    delivery: bunchedDelivery(measured),
    ...(turns ? { turns } : {}),
  };
}

/** How the figures were taken: the population, the percentile method and what n each needs, the window, and the slot-wait caveat. */
function measurementOf(
  metrics: Record<MetricName, Distribution>,
  windowMs: number | null,
  load: LoadDescription,
  serverSlots: number | null,
): RunSummary['measurement'] {
  const unsupported: Partial<Record<MetricName, string[]>> = {};
  for (const name of METRIC_NAMES) {
    if (metrics[name].unsupported.length > 0) unsupported[name] = [...metrics[name].unsupported];
  }
  return {
    latency_population: 'successful requests',
    percentile_method: 'linear',
    percentile_min_n: { ...PERCENTILE_MIN_N },
    unsupported_percentiles: unsupported,
    window_ms: windowMs,
    queue_ms: 'estimate',
    client_overhead_ms: 'includes any wait for a free server slot',
    server_slots: serverSlots,
    slot_wait_note: slotWaitNote(load, serverSlots),
  };
}

/** One workload group's counts, rates and goodput over its own window. */
function groupSummary(rows: readonly MeasuredRequest[], metrics: Record<MetricName, Distribution>, slo: SloSpec | null): GroupSummary {
  const groupWindow = measuredWindowMs(rows);
  const groupCounts = counts(rows);
  const groupGood = rows.filter((row) => isSuccess(row) && row.accepted !== false && meetsSlo(row, slo)).length;
  return {
    requests: groupCounts,
    metrics,
    throughput: {
      requests_per_s: perSecond(groupCounts.completed, groupWindow),
      output_tokens_per_s: perSecond(
        rows.filter(isSuccess).reduce((sum, row) => sum + (row.output_tokens ?? 0), 0),
        groupWindow,
      ),
    },
    accepted_rate: rows.length === 0 ? null : groupCounts.accepted / rows.length,
    goodput: { requests_per_s: perSecond(groupGood, groupWindow), fraction: rows.length === 0 ? null : groupGood / rows.length },
  };
}

/**
 * The load as delivered: offered and achieved rate, schedule slip, and whether the client was
 * the bottleneck (behind its schedule, or its own loop saturated or stalled); in open loop, the
 * latencies counted from each request's scheduled time.
 */
function loadSummary(
  described: LoadDescription,
  measured: readonly MeasuredRequest[],
  windowMs: number | null,
  clientLoad: ClientLoad | null,
): { load: RunSummary['load']; scheduleLatency: RunSummary['schedule_latency'] } {
  const scheduled = measured.filter((row) => row.scheduled_ms !== null);
  const slip = summarize(scheduled.map((row) => row.t0_ms - row.scheduled_ms!));
  const offered = described.mode === 'open' ? (described.rate ?? null) : null;
  const achieved = achievedRate(described.mode, measured, windowMs);
  const meanGapMs = offered ? 1000 / offered : null;
  // Below the n a p99 needs, the largest slip stands in for it: the stricter test.
  const slipTail = slip.p99 ?? slip.max;
  const slipLabel = slip.p99 !== null ? 'p99' : 'max';
  const behindSchedule = slipTail !== null && meanGapMs !== null && slipTail > Math.max(5, meanGapMs);
  const clientBusy = clientLoad ? clientBehindReason(clientLoad) : null;
  const clientBound = behindSchedule || clientBusy !== null;
  const notes: string[] = [];
  if (behindSchedule)
    notes.push(
      `the generator fell behind its schedule (${slipLabel} slip ${slipTail!.toFixed(1)} ms against a mean gap of ${meanGapMs!.toFixed(1)} ms): the offered load was not delivered; lower --rate or raise --max-outstanding`,
    );
  if (clientBusy) notes.push(clientBusy);
  const note = notes.length > 0 ? notes.join('; ') : null;
  const scheduledOk = scheduled.filter(isSuccess);
  const scheduleLatency =
    described.mode === 'open' && scheduled.length > 0
      ? {
          ttft_from_schedule_ms: summarize(
            values(
              scheduledOk,
              (row) => row.ttft_from_schedule_ms ?? (row.ttft_ms === null ? null : row.t0_ms - row.scheduled_ms! + row.ttft_ms),
            ),
          ),
          e2e_from_schedule_ms: summarize(
            values(
              scheduledOk,
              (row) => row.e2e_from_schedule_ms ?? (row.e2e_ms === null ? null : row.t0_ms - row.scheduled_ms! + row.e2e_ms),
            ),
          ),
        }
      : null;
  return {
    load: {
      mode: described.mode,
      offered,
      achieved,
      concurrency: described.mode === 'closed' ? (described.concurrency ?? null) : (described.max_outstanding ?? null),
      slip_ms_p99: slip.p99,
      slip_ms_max: slip.max,
      client_bound: clientBound,
      note,
      ...(clientLoad ? { client: clientLoad } : {}),
      steady_state: steadyStateOf(described.mode, measured),
    },
    scheduleLatency,
  };
}

/** Energy per completed request and output token, once the run's counts are known. */
function withWorkRatios(telemetry: TelemetrySummary | null, completedRequests: number, outputTokens: number): TelemetrySummary | null {
  if (!telemetry?.energy) return telemetry;
  return { ...telemetry, energy: withEnergyPerWork(telemetry.energy, { completedRequests, outputTokens }) };
}

/**
 * The window starts at the first completion (before it, completions have not begun, which is
 * no trend). Open loop: it ends at the last measured send, so the drain after it (fewer
 * completions by design) is not mistaken for one either; closed loop: at the last completion.
 */
function steadyStateOf(mode: string, measured: readonly MeasuredRequest[]): SteadyStateCheck {
  const sends = measured.map((row) => row.t0_ms);
  const ends = measured.filter((row) => isSuccess(row) && row.end_ms !== null).map((row) => row.end_ms!);
  // Reduced, not spread: a run can hold more requests than a call takes arguments.
  const least = (values: number[]) => values.reduce((low, value) => Math.min(low, value), Number.POSITIVE_INFINITY);
  const most = (values: number[]) => values.reduce((high, value) => Math.max(high, value), Number.NEGATIVE_INFINITY);
  const start = least(ends);
  const end = mode === 'open' ? most(sends) : most(ends);
  if (!Number.isFinite(start) || !Number.isFinite(end)) return steadyStateCheck([], 0, 0);
  return steadyStateCheck(ends, start, end);
}

/** The latencies each turn is summarized on: those the per-turn table shows (`perTurn` in the metric table). */
const TURN_METRICS: readonly TurnMetric[] = metricsShownIn('perTurn')
  .map(({ metric }) => metric)
  .filter(isPerRequest);

/** Per conversation turn: counts, TTFT and the prompt and cached tokens, from the server's own usage. */
export function turnSummaries(measured: readonly MeasuredRequest[]): TurnSummary[] | null {
  const byTurn = new Map<number, MeasuredRequest[]>();
  for (const row of measured) {
    if (row.turn === null || row.turn === undefined) continue;
    const rows = byTurn.get(row.turn);
    if (rows) rows.push(row);
    else byTurn.set(row.turn, [row]);
  }
  if (byTurn.size === 0) return null;
  const mean = (values: number[]) => (values.length === 0 ? null : values.reduce((sum, value) => sum + value, 0) / values.length);
  return [...byTurn.entries()]
    .sort(([a], [b]) => a - b)
    .map(([turn, rows]) => {
      const ok = rows.filter(isSuccess);
      const counted = ok.filter((row) => row.prompt_tokens !== null && row.cached_tokens !== null);
      const promptSum = counted.reduce((sum, row) => sum + row.prompt_tokens!, 0);
      return {
        turn,
        requests: rows.length,
        failed: rows.length - ok.length,
        ...(Object.fromEntries(TURN_METRICS.map((metric) => [metric, summarize(values(ok, (row) => row[metric]))])) as Record<
          TurnMetric,
          Distribution
        >),
        prompt_tokens_mean: mean(ok.flatMap((row) => (row.prompt_tokens === null ? [] : [row.prompt_tokens]))),
        cached_tokens_mean: mean(ok.flatMap((row) => (row.cached_tokens === null ? [] : [row.cached_tokens]))),
        cached_share: promptSum === 0 ? null : counted.reduce((sum, row) => sum + row.cached_tokens!, 0) / promptSum,
      };
    });
}
