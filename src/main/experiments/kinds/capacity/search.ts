import { decideQuantile, type QuantileDecision } from '../../../metrics/quantile-slo';

/** What one measured look at a load gives the decision: requests judged and, per SLO metric, how many were above its limit. */
export interface StepSample {
  n: number;
  violations: Record<string, number>;
  /** The load generator fell behind its schedule: the offered load was not delivered, so nothing is known about it. */
  clientBound: boolean;
  /**
   * Other processes competed for the machine while it ran (the contention sampler's verdict):
   * its latencies measure them as much as the server, so it is no evidence either way.
   */
  contaminated?: boolean;
}

export interface CapacitySearchSettings {
  /** Open-loop arrival rate (req/s, any positive value) or closed-loop concurrency (whole numbers). */
  by: 'rate' | 'concurrency' | 'users';
  percentile: number;
  metrics: readonly string[];
  start: number;
  minLoad: number;
  maxLoad: number;
  /** Bracketing multiplies the load by this until a load misses. */
  growth: number;
  /** Bisection stops when (high − low) / low is at most this. */
  relativeTolerance: number;
  /** Loads measured at most (bracket and bisection together). */
  maxSteps: number;
  /** Samples pooled at one load before it is called inconclusive. */
  maxLooks: number;
  /** Family-wise error of all the search's decisions together. */
  alpha: number;
  /** Times a client-bound sample is taken again before the load is set aside as unmeasurable. */
  invalidRetries: number;
}

export interface SearchStep {
  load: number;
  phase: 'bracket' | 'bisect';
  looks: number;
  n: number;
  violations: Record<string, number>;
  decision: QuantileDecision | 'invalid';
  /** Client-bound or contaminated samples taken again (never counted as SLO misses). */
  invalidSamples: number;
  /** Of those, the ones other processes competed with. */
  contaminatedSamples: number;
  /** Why the last sample set aside was: what an 'invalid' load could not get past. */
  invalidReason: 'client behind' | 'other processes competed' | null;
}

export interface SearchOutcome {
  /** The highest load shown to meet every SLO; null when even the lowest load tried did not. */
  capacity: number | null;
  /** The lowest load shown to miss one; null when none was. */
  lowestMiss: number | null;
  steps: SearchStep[];
  /** Why the search ended. */
  stopped: string;
  /** The α each decision was made at (the family-wise α split over every look the search may take). */
  alphaPerLook: number;
}

/**
 * One load's decision: looks at it until every metric is shown to meet, one misses, or the looks
 * run out (inconclusive). A sample whose client fell behind or whose machine was shared is
 * measured again, up to the retries, and then the load is invalid.
 */
async function decideLoad(
  settings: CapacitySearchSettings,
  alphaPerLook: number,
  load: number,
  phase: SearchStep['phase'],
  measure: (load: number, look: number) => Promise<StepSample>,
): Promise<SearchStep> {
  const step: SearchStep = {
    load,
    phase,
    looks: 0,
    n: 0,
    violations: Object.fromEntries(settings.metrics.map((metric) => [metric, 0])),
    decision: 'inconclusive',
    invalidSamples: 0,
    contaminatedSamples: 0,
    invalidReason: null,
  };
  while (step.looks < settings.maxLooks) {
    const sample = await measure(load, step.looks);
    if (sample.clientBound || sample.contaminated) {
      step.invalidSamples += 1;
      if (sample.clientBound) step.invalidReason = 'client behind';
      else {
        step.contaminatedSamples += 1;
        step.invalidReason = 'other processes competed';
      }
      if (step.invalidSamples > settings.invalidRetries) {
        step.decision = 'invalid';
        return step;
      }
      continue;
    }
    step.looks += 1;
    step.n += sample.n;
    for (const metric of settings.metrics) step.violations[metric]! += sample.violations[metric] ?? 0;
    const decisions = settings.metrics.map((metric) =>
      decideQuantile(step.violations[metric]!, step.n, settings.percentile, alphaPerLook, alphaPerLook / settings.metrics.length),
    );
    if (decisions.some((decision) => decision === 'misses')) step.decision = 'misses';
    else if (decisions.every((decision) => decision === 'meets')) step.decision = 'meets';
    else step.decision = 'inconclusive';
    if (step.decision !== 'inconclusive') return step;
  }
  return step;
}

/**
 * Brackets, then bisects, the highest load at which every SLO holds at the percentile.
 *
 * Every look at every load is one exact binomial decision (metrics/quantile-slo.ts) at
 * α / (maxSteps × maxLooks), a Bonferroni split; a load misses when any metric misses at that
 * α divided again by the number of metrics. So the chance that any decision of the whole
 * search is wrong is at most α, and with all of them right the true crossing lies in
 * [capacity, lowestMiss): the interval covers it with probability at least 1 − α. An
 * inconclusive load counts as not shown to meet (the search goes below it) but never as a miss.
 */
export async function searchCapacity(
  settings: CapacitySearchSettings,
  measure: (load: number, look: number) => Promise<StepSample>,
): Promise<SearchOutcome> {
  const alphaPerLook = settings.alpha / (settings.maxSteps * settings.maxLooks);
  const steps: SearchStep[] = [];
  const integer = settings.by !== 'rate';
  const round = (load: number) => (integer ? Math.round(load) : Math.round(load * 100) / 100);

  const measureLoad = async (load: number, phase: SearchStep['phase']) => {
    const step = await decideLoad(settings, alphaPerLook, load, phase, measure);
    steps.push(step);
    return step;
  };

  let capacity: number | null = null;
  let lowestMiss: number | null = null;
  // The lowest load not shown to meet (a miss, an inconclusive or an unmeasurable load): the search stays below it.
  let ceiling: number | null = null;
  let stopped = '';
  const budgetLeft = () => steps.length < settings.maxSteps;
  const record = (step: SearchStep) => {
    if (step.decision === 'meets') capacity = Math.max(capacity ?? -Infinity, step.load);
    else {
      ceiling = Math.min(ceiling ?? Infinity, step.load);
      if (step.decision === 'misses') lowestMiss = Math.min(lowestMiss ?? Infinity, step.load);
    }
  };

  let load = round(settings.start);
  record(await measureLoad(load, 'bracket'));
  const climbing = capacity !== null;
  /** Why bracketing cannot go on to `next`; null when it can. */
  const bracketEnd = (next: number): string | null => {
    if (climbing && next > settings.maxLoad)
      return `every load up to ${load} met the SLOs; the next (${next}) is above the largest allowed (${settings.maxLoad})`;
    if (!climbing && (next < settings.minLoad || next === load)) {
      const last = steps[steps.length - 1]!;
      return (
        `even the lowest load tried (${load}) was not shown to meet the SLOs` +
        (last.decision === 'inconclusive' ? ` (inconclusive after ${last.n} requests: more requests per look could decide it)` : '')
      );
    }
    return budgetLeft() ? null : `step budget (${settings.maxSteps}) spent while still bracketing`;
  };
  // Up from the start while loads meet; down from it while they do not.
  while (climbing ? ceiling === null : capacity === null) {
    const next = climbing
      ? round(Math.max(integer ? load + 1 : load * 1.01, load * settings.growth))
      : round(integer ? Math.floor(load / settings.growth) : load / settings.growth);
    const end = bracketEnd(next);
    if (end !== null) {
      stopped = end;
      break;
    }
    load = next;
    record(await measureLoad(load, 'bracket'));
  }

  // Bisect between the highest load that met and the lowest that did not.
  while (!stopped && capacity !== null && ceiling !== null) {
    const low: number = capacity;
    const high: number = ceiling;
    if ((high - low) / low <= settings.relativeTolerance) {
      stopped = `the bracket [${low}, ${high}] is within ${Math.round(settings.relativeTolerance * 100)} %`;
      break;
    }
    const middle = round(integer ? Math.floor((low + high) / 2) : (low + high) / 2);
    if (middle <= low || middle >= high) {
      stopped = `no load between ${low} and ${high} is left to try`;
      break;
    }
    if (!budgetLeft()) {
      stopped = `step budget (${settings.maxSteps}) spent`;
      break;
    }
    record(await measureLoad(middle, 'bisect'));
  }
  return { capacity, lowestMiss, steps, stopped, alphaPerLook };
}
