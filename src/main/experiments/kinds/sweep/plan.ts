import type { ExperimentResult } from '../../../../shared/contract/experiments';
import type { TradeOffAxes } from './trade-off';

export interface SweepPoint {
  name: string;
  concurrency: number;
  /** Throughput and tail latency on the sweep's axes (trade-off.ts); null when unavailable (a p95 that n cannot support is null). */
  throughput: number | null;
  latencyP95: number | null;
  /**
   * Mean over windows of each window's goodput, and the pooled share of good requests: succeeded,
   * passed the workload's acceptance checks and met every SLO.
   */
  goodput: number | null;
  goodputFraction: number | null;
  /** The pooled shares behind it: requests that succeeded within the SLOs, and requests that passed acceptance; null when unknown. */
  withinSloFraction?: number | null;
  acceptedFraction?: number | null;
}

/** Which of latency and acceptance kept a condition's good share down, in figures. */
function shortfall(point: SweepPoint): string {
  const parts = [
    point.withinSloFraction != null ? `${percent(point.withinSloFraction)} within the SLOs` : null,
    point.acceptedFraction != null ? `${percent(point.acceptedFraction)} passed acceptance` : null,
  ].filter(Boolean);
  return parts.length > 0 ? ` (${parts.join(', ')})` : '';
}

/** Points not dominated by another: no other has both more throughput and a lower p95 latency. */
export function paretoSet(points: { name: string; throughput: number | null; latencyP95: number | null }[]): Set<string> {
  const valid = points.filter((point) => point.throughput !== null && point.latencyP95 !== null);
  return new Set(
    valid
      .filter(
        (point) =>
          !valid.some(
            (other) =>
              other !== point &&
              other.throughput! >= point.throughput! &&
              other.latencyP95! <= point.latencyP95! &&
              (other.throughput! > point.throughput! || other.latencyP95! < point.latencyP95!),
          ),
      )
      .map((point) => point.name),
  );
}

/**
 * Conditions grouped by load level, in order of first appearance; within a level, the settings in
 * the order given, so each group's first member is its baseline. Comparing settings across load
 * levels would mix the effect of the setting with the effect of the load.
 */
export function byLoadLevel<T extends { concurrency: number }>(conditions: readonly T[]): T[][] {
  const groups = new Map<number, T[]>();
  for (const condition of conditions) {
    const group = groups.get(condition.concurrency) ?? [];
    group.push(condition);
    groups.set(condition.concurrency, group);
  }
  return [...groups.values()];
}

const percent = (value: number | null) => (value === null ? 'n/a' : `${(value * 100).toFixed(0)} %`);

/**
 * The sweep's answer. Without SLOs there is no single winner: throughput and latency trade off, and
 * which point on the Pareto set is right depends on a latency target only the user knows. With SLOs,
 * the conditions whose share of good requests reaches the attainment target qualify, and the one
 * with the highest goodput is chosen; every other condition is listed with why it was not, in
 * figures that separate latency from acceptance.
 */
export function sweepRecommendation(
  points: readonly SweepPoint[],
  slo: unknown | null,
  attainment: number,
  axes: Pick<TradeOffAxes, 'throughput' | 'latency'> = { throughput: 'output tokens/s', latency: 'TTFT p95' },
): ExperimentResult['recommendation'] & { pareto: string[] } {
  const pareto = paretoSet([...points]);
  const paretoNames = points.filter((point) => pareto.has(point.name)).map((point) => point.name);
  if (!slo) {
    const withoutP95 = points.filter((point) => point.latencyP95 === null).map((point) => point.name);
    const missing =
      withoutP95.length > 0
        ? ` ${withoutP95.length === points.length ? 'No condition has' : `${withoutP95.join(', ')} have`} a ${axes.latency} (too few requests to support it, or none succeeded); add windows or requests.`
        : '';
    return {
      choice: null,
      pareto: paretoNames,
      reason:
        paretoNames.length > 0
          ? `No SLO given, so no single winner: the Pareto set of ${axes.throughput} against ${axes.latency} is ${paretoNames.join(', ')}.${missing} Give --slo to choose the highest goodput among the conditions that meet it.`
          : `No SLO given, so no single winner, and no Pareto set.${missing}`,
      excluded: [],
    };
  }
  const excluded: { name: string; reason: string }[] = [];
  const qualified: SweepPoint[] = [];
  for (const point of points) {
    if (point.goodputFraction === null) excluded.push({ name: point.name, reason: 'no measured requests' });
    else if (point.goodputFraction < attainment)
      excluded.push({
        name: point.name,
        reason: `good on ${percent(point.goodputFraction)} of requests${shortfall(point)}, below the ${percent(attainment)} target`,
      });
    else qualified.push(point);
  }
  const ranked = qualified.sort((a, b) => (b.goodput ?? -1) - (a.goodput ?? -1));
  const [best, ...rest] = ranked;
  for (const point of rest)
    excluded.push({
      name: point.name,
      reason: `qualifies (good on ${percent(point.goodputFraction)}) with less goodput (${point.goodput?.toFixed(2) ?? 'n/a'} req/s)`,
    });
  if (!best) {
    // Say when acceptance, not latency, kept every condition out: a latency sweep should not read as "too slow".
    const measuredPoints = points.filter((point) => point.goodputFraction !== null);
    const latencyFine =
      measuredPoints.length > 0 &&
      measuredPoints.every((point) => point.withinSloFraction != null && point.withinSloFraction >= attainment);
    const bestAccepted = Math.max(...measuredPoints.map((point) => point.acceptedFraction ?? 0));
    return {
      choice: null,
      pareto: paretoNames,
      reason:
        `No condition had at least ${percent(attainment)} good requests (succeeded, passed acceptance and met the SLOs).` +
        (latencyFine
          ? ` Acceptance, not latency, kept them out: every condition met the SLOs on ${percent(attainment)} or more, but at most ${percent(bestAccepted)} of requests passed the workload's acceptance checks.`
          : ''),
      excluded,
    };
  }
  const runnerUp = rest[0] ? ` Runner-up: ${rest[0].name} at ${rest[0].goodput?.toFixed(2) ?? 'n/a'} req/s.` : '';
  return {
    choice: best.name,
    pareto: paretoNames,
    reason: `${best.name} has the highest goodput (${best.goodput?.toFixed(2) ?? 'n/a'} req/s, mean over windows) among the ${qualified.length} of ${points.length} conditions with at least ${percent(attainment)} good requests (succeeded, passed acceptance and met the SLOs).${runnerUp}`,
    excluded,
  };
}
