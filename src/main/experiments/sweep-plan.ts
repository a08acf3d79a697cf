import type { ExperimentResult } from '../../shared/contract/experiments';

export interface SweepPoint {
  name: string;
  concurrency: number;
  /** Output tokens/s and TTFT p95; null when unavailable (a p95 that n cannot support is null). */
  throughput: number | null;
  ttftP95: number | null;
  /** Mean over windows of each window's goodput, and the pooled share of requests that met every SLO. */
  goodput: number | null;
  goodputFraction: number | null;
}

/** Points not dominated by another: no other has both more throughput and a lower p95 TTFT. */
export function paretoSet(points: { name: string; throughput: number | null; ttftP95: number | null }[]): Set<string> {
  const valid = points.filter((point) => point.throughput !== null && point.ttftP95 !== null);
  return new Set(
    valid
      .filter(
        (point) =>
          !valid.some(
            (other) =>
              other !== point &&
              other.throughput! >= point.throughput! &&
              other.ttftP95! <= point.ttftP95! &&
              (other.throughput! > point.throughput! || other.ttftP95! < point.ttftP95!),
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
 * the conditions whose requests met them at the attainment target qualify, and the one with the
 * highest goodput is chosen; every other condition is listed with why it was not.
 */
export function sweepRecommendation(
  points: readonly SweepPoint[],
  slo: unknown | null,
  attainment: number,
): ExperimentResult['recommendation'] & { pareto: string[] } {
  const pareto = paretoSet([...points]);
  const paretoNames = points.filter((point) => pareto.has(point.name)).map((point) => point.name);
  if (!slo) {
    const withoutP95 = points.filter((point) => point.ttftP95 === null).map((point) => point.name);
    const missing =
      withoutP95.length > 0
        ? ` ${withoutP95.length === points.length ? 'No condition has' : `${withoutP95.join(', ')} have`} a TTFT p95 (too few requests to support it, or none succeeded); add windows or requests.`
        : '';
    return {
      choice: null,
      pareto: paretoNames,
      reason:
        paretoNames.length > 0
          ? `No SLO given, so no single winner: the Pareto set of output throughput against TTFT p95 is ${paretoNames.join(', ')}.${missing} Give --slo to choose the highest goodput among the conditions that meet it.`
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
        reason: `met the SLOs on ${percent(point.goodputFraction)} of requests, below the ${percent(attainment)} target`,
      });
    else qualified.push(point);
  }
  const ranked = qualified.sort((a, b) => (b.goodput ?? -1) - (a.goodput ?? -1));
  const [best, ...rest] = ranked;
  for (const point of rest)
    excluded.push({
      name: point.name,
      reason: `meets the SLOs (${percent(point.goodputFraction)}) with less goodput (${point.goodput?.toFixed(2) ?? 'n/a'} req/s)`,
    });
  if (!best)
    return {
      choice: null,
      pareto: paretoNames,
      reason: `No condition met the SLOs on at least ${percent(attainment)} of its requests.`,
      excluded,
    };
  const runnerUp = rest[0] ? ` Runner-up: ${rest[0].name} at ${rest[0].goodput?.toFixed(2) ?? 'n/a'} req/s.` : '';
  return {
    choice: best.name,
    pareto: paretoNames,
    reason: `${best.name} has the highest goodput (${best.goodput?.toFixed(2) ?? 'n/a'} req/s, mean over windows) among the ${qualified.length} of ${points.length} conditions that met the SLOs on at least ${percent(attainment)} of requests.${runnerUp}`,
    excluded,
  };
}
