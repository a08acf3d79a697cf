import type {
  ConditionResult,
  ExperimentResult,
  QualityGate,
  QuantConstraints,
  RecommendationGate,
  VerdictRow,
} from '../../shared/contract/experiments';

export type { QualityGate, QuantConstraints, QuantObjective } from '../../shared/contract/experiments';
import { SLO_METRICS, type SloSpec } from '../../shared/contract/runs';
import { metricsJudgedIn } from '../../shared/metric-table';
import { EXPERIMENT_DEFAULTS, PERCENTILE_MIN_N } from '../../shared/experiment-defaults';
import { normalQuantile } from '../metrics/normal-quantile';
import { verdictSettled } from '../metrics/sequential-verdicts';

type Recommendation = ExperimentResult['recommendation'];
type GateCell = RecommendationGate['conditions'][number];

const pct = (value: number) => `${(value * 100).toFixed(1)} %`;
const points = (value: number) => `${value >= 0 ? '+' : ''}${(value * 100).toFixed(1)} points`;
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

/** Wilson score interval for x successes of n at the given z. */
function wilson(x: number, n: number, z: number): [number, number] {
  const p = x / n;
  const denominator = 1 + (z * z) / n;
  const centre = (p + (z * z) / (2 * n)) / denominator;
  const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / denominator;
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

/**
 * One-sided upper bound of p_candidate − p_baseline (Newcombe's hybrid score method from
 * two Wilson intervals). Below zero: the candidate accepts significantly less often.
 * Newcombe rather than a Wald interval because acceptance counts are small and often 0 or n,
 * where Wald collapses to a zero-width interval.
 */
export function acceptanceUpperBound(
  candidate: { accepted: number; judged: number },
  baseline: { accepted: number; judged: number },
  alpha: number,
): { difference: number; upper: number } {
  const z = normalQuantile(1 - alpha);
  const p1 = candidate.accepted / candidate.judged;
  const p2 = baseline.accepted / baseline.judged;
  const [, u1] = wilson(candidate.accepted, candidate.judged, z);
  const [l2] = wilson(baseline.accepted, baseline.judged, z);
  const difference = p1 - p2;
  return { difference, upper: difference + Math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2) };
}

function acceptanceGate(conditions: ConditionResult[], alpha: number): RecommendationGate {
  const baseline = conditions[0]!;
  const base = baseline.acceptance ?? null;
  const anyChecks = conditions.some((condition) => (condition.acceptance?.judged ?? 0) > 0);
  const cells = conditions.map((condition): GateCell => {
    const own = condition.acceptance ?? null;
    const value = own && own.judged > 0 ? own.accepted / own.judged : null;
    if (!anyChecks) return { name: condition.name, value: null, status: 'not applicable', detail: 'no acceptance checks on either side' };
    if (condition === baseline) return { name: condition.name, value, status: 'not applicable', detail: 'the baseline itself' };
    if (!own || own.judged === 0 || !base || base.judged === 0)
      return { name: condition.name, value, status: 'unknown', detail: 'no judged requests on one side' };
    const { difference, upper } = acceptanceUpperBound(own, base, alpha);
    const summary = `${own.accepted}/${own.judged} (${pct(own.accepted / own.judged)}) vs ${baseline.name} ${base.accepted}/${base.judged} (${pct(base.accepted / base.judged)}): ${points(difference)}, one-sided ${pct(1 - alpha)} upper bound ${points(upper)}`;
    return upper < 0
      ? { name: condition.name, value, status: 'fail', detail: `${summary} < 0, significantly below the baseline` }
      : { name: condition.name, value, status: 'pass', detail: `${summary} ≥ 0, not significantly below` };
  });
  return {
    name: 'acceptance',
    threshold: `not significantly below the baseline's (one-sided α = ${alpha}, failures count as not accepted)`,
    conditions: cells,
  };
}

function acceptanceFloorGate(conditions: ConditionResult[], floor: number): RecommendationGate {
  return {
    name: 'acceptance floor',
    threshold: `≥ ${pct(floor)}`,
    conditions: conditions.map((condition): GateCell => {
      const own = condition.acceptance ?? null;
      if (!own || own.judged === 0)
        return {
          name: condition.name,
          value: null,
          status: 'unknown',
          detail: 'no judged requests: add acceptance checks to the workload',
        };
      const value = own.accepted / own.judged;
      return value >= floor
        ? { name: condition.name, value, status: 'pass', detail: `${pct(value)} ≥ ${pct(floor)}` }
        : {
            name: condition.name,
            value,
            status: 'fail',
            detail: `${pct(value)} is ${((floor - value) * 100).toFixed(1)} points below ${pct(floor)}`,
          };
    }),
  };
}

function agreementGate(conditions: ConditionResult[], minimum: number): RecommendationGate {
  const baseline = conditions[0]!;
  const floor = baseline.token_agreement_noise_floor?.mean;
  return {
    name: 'token agreement',
    threshold: `≥ ${pct(minimum)} of the baseline's greedy tokens reproduced before the first divergence (mean over items)`,
    conditions: conditions.map((condition): GateCell => {
      if (condition === baseline)
        return {
          name: condition.name,
          value: condition.token_agreement?.mean ?? null,
          status: 'not applicable',
          detail: `the baseline itself${floor != null ? `; against a second pass of itself ${pct(floor)}` : ''}`,
        };
      const agreement = condition.token_agreement;
      if (agreement?.mean == null)
        return {
          name: condition.name,
          value: null,
          status: 'unknown',
          detail: `no token agreement: ${agreement?.error ?? 'the token pass did not run'}`,
        };
      return agreement.mean >= minimum
        ? {
            name: condition.name,
            value: agreement.mean,
            status: 'pass',
            detail: `${pct(agreement.mean)} ≥ ${pct(minimum)} over ${agreement.items} items`,
          }
        : {
            name: condition.name,
            value: agreement.mean,
            status: 'fail',
            detail: `${pct(agreement.mean)} is ${((minimum - agreement.mean) * 100).toFixed(1)} points below ${pct(minimum)} over ${agreement.items} items`,
          };
    }),
  };
}

function kldGate(conditions: ConditionResult[], maximum: number): RecommendationGate {
  const baseline = conditions[0]!;
  return {
    name: 'kld',
    threshold: `mean KL divergence ≤ ${maximum} nats per token`,
    conditions: conditions.map((condition): GateCell => {
      if (condition === baseline)
        return { name: condition.name, value: condition.kld_mean ?? null, status: 'not applicable', detail: 'the baseline itself' };
      const kld = condition.kld_mean ?? null;
      if (kld === null)
        return {
          name: condition.name,
          value: null,
          status: 'unknown',
          detail: `no KLD, so the gate cannot pass: ${condition.kld_error ?? 'not measured'}`,
        };
      const where = condition.kld_tokens != null ? ` on ${condition.kld_tokens} tokens at context ${condition.kld_context ?? '?'}` : '';
      return kld <= maximum
        ? { name: condition.name, value: kld, status: 'pass', detail: `${kld.toFixed(6)} ≤ ${maximum}${where}` }
        : {
            name: condition.name,
            value: kld,
            status: 'fail',
            detail: `${kld.toFixed(6)} exceeds ${maximum} by ${(kld - maximum).toFixed(6)}${where}`,
          };
    }),
  };
}

/**
 * SLOs are judged on p95, and only where n supports a p95 (PERCENTILE_MIN_N.p95). With
 * fewer requests the gate is `unknown` and blocks the condition: a p95 interpolated from a
 * handful of samples says little about the tail, and passing it silently would recommend a
 * condition nobody has shown to meet the SLO.
 */
function sloGates(conditions: ConditionResult[], slo: SloSpec): RecommendationGate[] {
  const gates: RecommendationGate[] = [];
  for (const metric of SLO_METRICS) {
    const limit = slo[metric];
    if (limit === undefined) continue;
    gates.push({
      name: `SLO ${metric} p95`,
      threshold: `p95 ≤ ${limit} ms (p95 needs n ≥ ${PERCENTILE_MIN_N.p95})`,
      conditions: conditions.map((condition): GateCell => {
        const distribution = condition.metrics[metric];
        if (distribution.n < PERCENTILE_MIN_N.p95 || distribution.p95 === null) {
          return {
            name: condition.name,
            value: null,
            status: 'unknown',
            detail: `n too small: ${distribution.n} requests, p95 needs ${PERCENTILE_MIN_N.p95}; run more requests per window`,
          };
        }
        return distribution.p95 <= limit
          ? {
              name: condition.name,
              value: distribution.p95,
              status: 'pass',
              detail: `${distribution.p95.toFixed(1)} ms ≤ ${limit} ms (n ${distribution.n})`,
            }
          : {
              name: condition.name,
              value: distribution.p95,
              status: 'fail',
              detail: `${distribution.p95.toFixed(1)} ms misses ${limit} ms by ${(distribution.p95 - limit).toFixed(1)} ms (n ${distribution.n})`,
            };
      }),
    });
  }
  return gates;
}

function vramGate(conditions: ConditionResult[], budget: number): RecommendationGate {
  return {
    name: 'VRAM budget',
    threshold: `server-attributable VRAM ≤ ${budget} MiB`,
    conditions: conditions.map((condition): GateCell => {
      const server = condition.vram?.server_mib ?? null;
      if (server === null)
        return {
          name: condition.name,
          value: null,
          status: 'unknown',
          detail: "no GPU telemetry of the server's own memory, so the budget cannot be checked",
        };
      return server <= budget
        ? { name: condition.name, value: server, status: 'pass', detail: `${server} MiB ≤ ${budget} MiB` }
        : { name: condition.name, value: server, status: 'fail', detail: `${server} MiB exceeds ${budget} MiB by ${server - budget} MiB` };
    }),
  };
}

/**
 * A contaminated condition's timings measured something else, and its speed verdicts are
 * withheld; a candidate is recommended only on clean timings of its own and the baseline's.
 * The baseline stays eligible: keeping it needs no comparison.
 */
function cleanGate(conditions: ConditionResult[]): RecommendationGate {
  const baseline = conditions[0]!;
  return {
    name: 'uncontaminated',
    threshold: 'no contaminated window, on the candidate or the baseline',
    conditions: conditions.map((condition): GateCell => {
      if (condition === baseline)
        return {
          name: condition.name,
          value: null,
          status: 'not applicable',
          detail: condition.contaminated
            ? 'the baseline is contaminated (see its condition row), so no candidate can be compared with it'
            : 'the baseline itself',
        };
      if (condition.contaminated)
        return { name: condition.name, value: null, status: 'fail', detail: condition.contamination_reason ?? 'contaminated' };
      if (baseline.contaminated)
        return { name: condition.name, value: null, status: 'fail', detail: `the baseline ${baseline.name} is contaminated` };
      return { name: condition.name, value: null, status: 'pass', detail: 'clean' };
    }),
  };
}

/** Every gate the constraints ask for, in the order they are printed. */
export function evaluateGates(conditions: ConditionResult[], constraints: QuantConstraints): RecommendationGate[] {
  const defaults = EXPERIMENT_DEFAULTS.gates;
  const disabled = new Set(constraints.disabledGates ?? []);
  const off = (name: QualityGate, threshold: string): RecommendationGate => ({
    name,
    threshold: `off (${threshold} by default)`,
    conditions: conditions.map((condition) => ({
      name: condition.name,
      value: null,
      status: 'not applicable',
      detail: 'gate switched off',
    })),
  });
  const gates: RecommendationGate[] = [
    disabled.has('acceptance')
      ? off('acceptance', `α = ${defaults.acceptanceAlpha}`)
      : acceptanceGate(conditions, constraints.acceptanceAlpha ?? defaults.acceptanceAlpha),
    disabled.has('token agreement')
      ? off('token agreement', `≥ ${pct(defaults.minTokenAgreement)}`)
      : agreementGate(conditions, constraints.minAgreement ?? defaults.minTokenAgreement),
    disabled.has('kld') ? off('kld', `≤ ${defaults.maxKld}`) : kldGate(conditions, constraints.maxKld ?? defaults.maxKld),
  ];
  if (constraints.minAcceptance !== null) gates.push(acceptanceFloorGate(conditions, constraints.minAcceptance));
  if (constraints.slo) gates.push(...sloGates(conditions, constraints.slo));
  if (constraints.vramBudgetMib !== null) gates.push(vramGate(conditions, constraints.vramBudgetMib));
  if (conditions.some((condition) => condition.contaminated)) gates.push(cleanGate(conditions));
  return gates;
}

/** The verdicts that say a condition is faster or slower: `speed` in the metric table. */
const SPEED_METRICS: ReadonlySet<string> = new Set(metricsJudgedIn('speed'));
export const speedRows = (verdicts: VerdictRow[], baseline: string, name: string) =>
  verdicts.filter((row) => row.a === baseline && row.b === name && SPEED_METRICS.has(row.metric.split(' ')[0]!));

/**
 * The speed verdicts a recommendation still waits on: a candidate called slower on any of them is
 * out whatever the others say; for any other, each must be decided before its place is certain.
 */
export function openSpeedVerdicts(verdicts: VerdictRow[]): VerdictRow[] {
  const speed = verdicts.filter((row) => SPEED_METRICS.has(row.metric.split(' ')[0]!));
  const candidates = [...new Set(speed.map((row) => row.b))];
  return candidates.flatMap((name) => {
    const rows = speed.filter((row) => row.b === name);
    return rows.some((row) => row.verdict === 'slower') ? [] : rows.filter((row) => !verdictSettled(row));
  });
}

export function describeVerdict(row: VerdictRow): string {
  const difference =
    row.difference === null
      ? ''
      : ` (${row.difference >= 0 ? '+' : ''}${row.difference.toFixed(2)} ms${row.ci ? ` [${row.ci[0].toFixed(2)}, ${row.ci[1].toFixed(2)}]` : ''})`;
  return `${row.metric} ${row.verdict}${row.verdict === 'faster' || row.verdict === 'slower' ? difference : ''}`;
}

/** What memory a recommendation compares: its name, a condition's figure, whether a candidate saves enough, and how a figure reads. */
export interface MemoryKey {
  label: string;
  value: (condition: ConditionResult) => number;
  smaller: (candidate: ConditionResult, baseline: ConditionResult) => boolean;
  show: (condition: ConditionResult) => string;
}

/** What a kind adds to the recommendation every kind shares: a memory of its own to compare, where it has one for these conditions. */
export interface KindGates {
  memory?: (conditions: ConditionResult[]) => MemoryKey | null;
}

/**
 * Memory compared on the server's own VRAM when every condition has it, else on file size,
 * unless the kind compares a memory of its own (KindGates.memory).
 * A saving under EXPERIMENT_DEFAULTS.gates.minMemorySaving (1 %) of the baseline's is not called smaller: for VRAM it is within what
 * allocator rounding and telemetry sampling move, and for a file (two quantizers' takes on
 * one type) it buys nothing worth a change.
 */
function memoryKey(conditions: ConditionResult[]): MemoryKey {
  if (conditions.every((condition) => condition.vram?.server_mib != null)) {
    return {
      label: 'server VRAM',
      value: (condition) => condition.vram!.server_mib!,
      smaller: (candidate, baseline) =>
        candidate.vram!.server_mib! < baseline.vram!.server_mib! * (1 - EXPERIMENT_DEFAULTS.gates.minMemorySaving),
      show: (condition) => `${condition.vram!.server_mib} MiB`,
    };
  }
  return {
    label: 'file size',
    value: (condition) => condition.file_bytes ?? Number.POSITIVE_INFINITY,
    smaller: (candidate, baseline) =>
      (candidate.file_bytes ?? Number.POSITIVE_INFINITY) < (baseline.file_bytes ?? 0) * (1 - EXPERIMENT_DEFAULTS.gates.minMemorySaving),
    show: (condition) => (condition.file_bytes == null ? 'size unknown' : mib(condition.file_bytes)),
  };
}

/**
 * Gates first, then the objective. A candidate replaces the baseline only when it is better
 * in a way the data shows — smaller in memory (objective `memory`), or faster per a verdict
 * on the objective's metric — and no TTFT/TPOT verdict calls it slower. A gain inside the
 * noise keeps the baseline. Quality gates compare against the baseline, so they do not
 * apply to it; SLO and VRAM gates do, and a baseline that fails them is no fallback.
 */
export function recommend(
  conditions: ConditionResult[],
  verdicts: VerdictRow[],
  constraints: QuantConstraints,
  kindGates: KindGates = {},
): Recommendation {
  const objective = constraints.objective ?? 'memory';
  const gates = evaluateGates(conditions, constraints);
  const baseline = conditions[0];
  if (!baseline) return { choice: null, reason: 'No conditions.', excluded: [], gates, objective };
  const blocking = (name: string) =>
    gates.flatMap((gate) =>
      gate.conditions
        .filter((cell) => cell.name === name && (cell.status === 'fail' || cell.status === 'unknown'))
        .map((cell) => `${gate.name} ${cell.status === 'fail' ? 'failed' : 'cannot pass'}: ${cell.detail}`),
    );
  const excluded: Recommendation['excluded'] = [];
  const eligible = conditions.filter((condition) => {
    const reasons = blocking(condition.name);
    if (reasons.length > 0) excluded.push({ name: condition.name, reason: reasons.join('; ') });
    return reasons.length === 0;
  });
  const memory = kindGates.memory?.(conditions) ?? memoryKey(conditions);
  const speedMetric = objective === 'memory' ? null : `${objective}_ms p50`;
  const rank = (condition: ConditionResult) =>
    speedMetric === null
      ? memory.value(condition)
      : (condition.metrics[objective === 'tpot' ? 'tpot_ms' : 'ttft_ms'].p50 ?? Number.POSITIVE_INFINITY);
  const tieBreak = (condition: ConditionResult) => condition.metrics.tpot_ms.p50 ?? Number.POSITIVE_INFINITY;
  const ranked = [...eligible].sort((a, b) => rank(a) - rank(b) || tieBreak(a) - tieBreak(b));
  const objectiveText =
    objective === 'memory' ? `smallest ${memory.label}, then TPOT p50` : `lowest ${objective.toUpperCase()} p50, then TPOT p50`;

  const notBetter: string[] = [];
  let choice: ConditionResult | null = null;
  let why = '';
  for (const candidate of ranked) {
    if (candidate === baseline) continue;
    const rows = speedRows(verdicts, baseline.name, candidate.name);
    const slower = rows.filter((row) => row.verdict === 'slower');
    const faster = rows.filter((row) => row.verdict === 'faster' && (speedMetric === null || row.metric === speedMetric));
    const smaller = objective === 'memory' && memory.smaller(candidate, baseline);
    if (slower.length > 0) {
      notBetter.push(`${candidate.name} passes the gates but is slower than ${baseline.name}: ${slower.map(describeVerdict).join(', ')}`);
      excluded.push({ name: candidate.name, reason: `slower than ${baseline.name}: ${slower.map(describeVerdict).join(', ')}` });
      continue;
    }
    if (!smaller && faster.length === 0) {
      notBetter.push(
        `${candidate.name} is not better beyond noise (${objective === 'memory' ? `${memory.label} ${memory.show(candidate)} vs ${memory.show(baseline)}; ` : ''}${rows.map(describeVerdict).join(', ') || 'no speed verdicts'})`,
      );
      continue;
    }
    choice = candidate;
    const gains = [
      ...(smaller ? [`${memory.label} ${memory.show(candidate)} vs ${memory.show(baseline)}`] : []),
      ...faster.map(describeVerdict),
    ];
    const others = rows.filter((row) => !faster.includes(row) && row.metric.endsWith('p50')).map((row) => `${row.metric} ${row.verdict}`);
    why = `Passes every gate and is better than ${baseline.name} (${gains.join('; ')})${others.length ? `; ${others.join(', ')}` : ''}. Quality: ${qualityLine(candidate)}.`;
    break;
  }

  if (choice) return { choice: choice.name, reason: why, excluded, gates, objective: objectiveText };
  return withoutAWinner({ baseline, ranked, eligible, excluded, notBetter, blocking, gates, objectiveText });
}

/**
 * When no candidate is better: another condition if the baseline fails a gate and one passes
 * them all, else the baseline kept (with why each other is not chosen), else nothing.
 */
function withoutAWinner(found: {
  baseline: ConditionResult;
  ranked: ConditionResult[];
  eligible: ConditionResult[];
  excluded: Recommendation['excluded'];
  notBetter: string[];
  blocking: (name: string) => string[];
  gates: Recommendation['gates'];
  objectiveText: string;
}): Recommendation {
  const { baseline, ranked, eligible, excluded, notBetter, blocking, gates, objectiveText } = found;
  const fallback = ranked.find((condition) => condition !== baseline && !excluded.some((item) => item.name === condition.name));
  if (!eligible.includes(baseline) && fallback) {
    return {
      choice: fallback.name,
      reason: `The baseline ${baseline.name} fails a gate (${blocking(baseline.name).join('; ')}) and ${fallback.name} passes every gate, first by ${objectiveText}. Quality: ${qualityLine(fallback)}.`,
      excluded,
      gates,
      objective: objectiveText,
    };
  }
  if (eligible.includes(baseline)) {
    const failing = excluded.filter((item) => !notBetter.some((line) => line.startsWith(`${item.name} `))).map((item) => item.name);
    const parts = [
      ...notBetter,
      ...(failing.length > 0 ? [`${failing.join(', ')} ${failing.length === 1 ? 'fails' : 'fail'} a gate`] : []),
    ];
    const detail = parts.length > 0 ? parts.join('; ') : 'there is no other condition';
    return {
      choice: baseline.name,
      reason: `Keep the baseline ${baseline.name}: no eligible candidate is better beyond noise — ${detail}.`,
      excluded,
      gates,
      objective: objectiveText,
    };
  }
  return {
    choice: null,
    reason: `No condition meets the gates, the baseline ${baseline.name} included (${blocking(baseline.name).join('; ')}).`,
    excluded,
    gates,
    objective: objectiveText,
  };
}

export function qualityLine(condition: ConditionResult): string {
  const agreement = condition.token_agreement?.mean;
  return [
    `token agreement ${agreement == null ? 'unknown' : pct(agreement)}`,
    `KLD ${condition.kld_mean == null ? 'unknown' : condition.kld_mean.toFixed(6)}`,
    ...(condition.acceptance && condition.acceptance.judged > 0
      ? [`acceptance ${condition.acceptance.accepted}/${condition.acceptance.judged}`]
      : []),
  ].join(', ');
}
