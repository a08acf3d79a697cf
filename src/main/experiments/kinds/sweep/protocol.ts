import { isSweepWorkloadField, type SweepProtocol } from '../../../../shared/contract/experiment-kinds/sweep';
import type { ConditionResult, ExperimentResult, VerdictRow } from '../../../../shared/contract/experiments';
import type { SloSpec } from '../../../../shared/contract/runs';
import { EXPERIMENT_DEFAULTS } from '../../../../shared/experiment-defaults';
import { DEFAULT_VERDICT_SETTINGS, settingsPerFamily, type VerdictSettings } from '../../../metrics/window-verdicts';
import { verdictSettled } from '../../../metrics/sequential-verdicts';
import { openName, verdictSettingsOf } from '../../window-rounds';
import { applySettings, assertValidProfile } from '../../../engines/llamacpp/profile-rules';
import { conditionVerdicts, judgedCondition, summarizeCondition } from '../../condition-summary';
import { settleExperiment, type SingleModelExperimentInputs } from '../../experiment-inputs';
import { byLoadLevel, sweepRecommendation } from './plan';
import { workloadAtValue } from './workload-field';
import { tradeOffAxes, type TradeOffAxes } from './trade-off';
import { runSettingWindows, type WindowGoodput } from '../../setting-windows';
import type { WindowCooldown } from '../../window-cooldown';

export { paretoSet } from './plan';

/** With SLOs, a setting qualifies when at least this share of its requests met every one of them. */
const SLO_ATTAINMENT = 0.9;

/**
 * One server setting varied across values × load levels, in repeated windows. Each (setting,
 * window) gets a fresh server that then runs every load level (in an order rotated per window):
 * a server's start-up state (memory layout, page cache) is part of what a window replicates, so
 * reusing one server across windows would understate the spread between windows. Settings run in
 * rotated order per window, so drift does not always land on the same one.
 */
export async function runSweep(options: SweepOptions): Promise<ExperimentResult> {
  const repeats = options.repeats ?? EXPERIMENT_DEFAULTS.repeats;
  const attainment = options.sloAttainment ?? SLO_ATTAINMENT;
  const settings = options.vary.values.map((value) => sweepSetting(options, value));
  const nameOf = (value: string, concurrency: number) => `${options.vary.field}=${value} @ c=${concurrency}`;
  const protocol = sweepProtocol(options, repeats, attainment);
  const experimentId = options.experiments.create('sweep', protocol);
  const conditions = settings.flatMap(({ value }) =>
    options.concurrencies.map((concurrency) => ({
      name: nameOf(value, concurrency),
      value,
      concurrency,
      runIds: [] as string[],
      goodput: [] as WindowGoodput[],
    })),
  );
  const summariesSoFar = () =>
    conditions.map((condition) => ({ condition, ...summarizeCondition(options.runs, condition.name, condition.runIds) }));
  return settleExperiment(options, experimentId, async () => {
    const stopping = await runSettingWindows(options, {
      experimentId,
      settings,
      concurrencies: options.concurrencies,
      repeats,
      conditions,
      nameOf,
      describe: (value) => `${options.vary.field}=${value}`,
      // The sweep's answer is its figures (goodput, the Pareto set); it stops early only once every verdict is decided too.
      openAfter: options.fixed
        ? undefined
        : (settings) =>
            verdictsPerLoadLevel(summariesSoFar(), settings)
              .filter((row) => !verdictSettled(row))
              .map(openName),
    });

    const summaries = summariesSoFar();
    const axes = tradeOffAxes(summaries.map(({ result }) => result));
    const points = summaries.map(({ condition, result }) => sweepPoint(condition, result, axes));
    const recommendation = sweepRecommendation(points, options.slo, attainment, axes);
    const pareto = new Set(recommendation.pareto);
    const results: ConditionResult[] = summaries.map(({ condition, result }, index) => ({
      ...result,
      setting: { field: options.vary.field, value: condition.value },
      concurrency: condition.concurrency,
      windows_run: condition.runIds.length,
      goodput_requests_per_s: points[index]!.goodput,
      goodput_fraction: points[index]!.goodputFraction,
      meets_slo: options.slo ? points[index]!.goodputFraction !== null && points[index]!.goodputFraction! >= attainment : null,
      ttft_p95_ms: result.metrics.ttft_ms.p95,
      pareto: pareto.has(condition.name),
    }));
    const verdicts = verdictsPerLoadLevel(summaries, verdictSettingsOf(stopping));
    const result: ExperimentResult = {
      experiment_id: experimentId,
      kind: 'sweep',
      status: 'completed',
      protocol,
      conditions: results,
      verdicts,
      recommendation: { choice: recommendation.choice, reason: recommendation.reason, excluded: recommendation.excluded },
      stopping,
    };
    return result;
  });
}

/** One value of the sweep: a server setting on the experiment's workload, or the workload's batch on the experiment's server. */
function sweepSetting(options: SweepOptions, value: string) {
  const { field } = options.vary;
  if (isSweepWorkloadField(field))
    return { value, profile: options.profile, workload: { ...options.workload, def: workloadAtValue(field, options.workload.def, value) } };
  const profile = applySettings(options.profile, [`${field}=${value}`]);
  assertValidProfile(profile);
  return { value, profile };
}

type SweepCondition = { name: string; value: string; concurrency: number; runIds: string[]; goodput: WindowGoodput[] };

/** One condition as the recommendation weighs it: throughput, tail latency, and goodput pooled over its windows. */
function sweepPoint(condition: SweepCondition, result: ConditionResult, axes: TradeOffAxes) {
  const rates = condition.goodput.flatMap((window) => (window.requestsPerS === null ? [] : [window.requestsPerS]));
  const counted = condition.goodput.filter((window) => window.fraction !== null && window.measured > 0);
  const measured = counted.reduce((sum, window) => sum + window.measured, 0);
  // Pooled over windows, weighted by each window's requests, like the good share itself.
  const pooled = (share: (window: (typeof counted)[number]) => number | null) =>
    measured === 0 || counted.some((window) => share(window) === null)
      ? null
      : counted.reduce((sum, window) => sum + share(window)! * window.measured, 0) / measured;
  return {
    name: condition.name,
    concurrency: condition.concurrency,
    throughput: axes.throughputOf(result),
    latencyP95: axes.latencyOf(result),
    goodput: rates.length === 0 ? null : rates.reduce((sum, rate) => sum + rate, 0) / rates.length,
    goodputFraction: pooled((window) => window.fraction),
    withinSloFraction: pooled((window) => window.withinSlo),
    acceptedFraction: pooled((window) => window.accepted),
  };
}

/**
 * Verdicts within each load level, against the first setting at that level. Each level's family
 * is Holm-corrected inside conditionVerdicts, at its share of the error budget (settingsPerFamily), so
 * the whole experiment keeps its family-wise confidence over all levels and looks.
 */
function verdictsPerLoadLevel(
  summaries: (ReturnType<typeof summarizeCondition> & { condition: SweepCondition })[],
  settings: VerdictSettings = DEFAULT_VERDICT_SETTINGS,
): VerdictRow[] {
  const levels = byLoadLevel(summaries.map((entry) => ({ ...entry, concurrency: entry.condition.concurrency }))).filter(
    (group) => group.length > 1,
  );
  const settingsPerLevel = settingsPerFamily(settings, levels.length);
  return levels.flatMap((group) =>
    conditionVerdicts(
      group.map((entry) => judgedCondition(entry.result, entry.windows)),
      settingsPerLevel,
    ),
  );
}

type SweepOptions = SingleModelExperimentInputs & {
  vary: { field: string; values: string[] };
  concurrencies: number[];
  requestsPerCondition: number | null;
  /** Windows per condition at most; each window is a fresh server per setting. */
  repeats?: number;
  /** Run every window rather than stopping once every verdict is decided. */
  fixed?: boolean;
  slo: SloSpec | null;
  /** With SLOs, the share of a condition's requests that must meet them. */
  sloAttainment?: number;
  signal?: AbortSignal;
  cooldown?: WindowCooldown | null;
  onStatus?: (line: string) => void;
};

/** What the sweep's record says it did. */
function sweepProtocol(options: SweepOptions, repeats: number, attainment: number): SweepProtocol {
  return {
    kind: 'sweep',
    cooldown: options.cooldown?.describe() ?? null,
    model: options.model.ref,
    workload: options.workload.def.name,
    vary: options.vary,
    concurrency: options.concurrencies,
    repeats,
    requests_per_condition: options.requestsPerCondition,
    slo: options.slo,
    slo_attainment: options.slo ? attainment : null,
    profile: options.profile,
    windows:
      'each window starts every setting on a fresh server, settings and load levels in rotated order; verdicts compare settings only within a load level, against the first setting',
  };
}
