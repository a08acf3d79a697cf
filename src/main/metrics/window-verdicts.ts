import type { Verdict } from '../../shared/contract/compare';
import type { VerdictRow } from '../../shared/contract/experiments';
import { EXPERIMENT_DEFAULTS, PERCENTILE_MIN_N } from '../../shared/experiment-defaults';
import { metricDefinition } from '../../shared/metric-table';
import { percentile, sortedFinite } from './distribution';
import { studentTCdf, studentTQuantile } from './student-t';

export type Statistic = 'p50' | 'p95' | 'mean';

/** A group-sequential design: the windows per side at which the family is looked at, ascending; the last is the most it runs. */
export interface SequentialDesign {
  looks: readonly number[];
}

export interface VerdictSettings {
  /** Family-wise confidence across all the verdicts decided together. */
  confidence: number;
  /** `equivalent` when the interval of B/A − 1 lies within ± this. */
  equivalenceMargin: number;
  minWindowsPerSide: number;
  minRequestsPerSide: number;
  /** Decide as one look of a group-sequential design rather than once at a fixed size. */
  sequential?: SequentialDesign;
}

export const DEFAULT_VERDICT_SETTINGS: VerdictSettings = {
  confidence: EXPERIMENT_DEFAULTS.confidence,
  equivalenceMargin: EXPERIMENT_DEFAULTS.equivalenceMargin,
  minWindowsPerSide: EXPERIMENT_DEFAULTS.minWindowsPerSide,
  minRequestsPerSide: EXPERIMENT_DEFAULTS.minRequestsPerSide,
};

/**
 * The settings for one of `families` families that are each Holm-corrected on their own but must together
 * keep `settings.confidence` family-wise: the error budget split evenly (Bonferroni), which holds however the
 * families' errors are related, and at every look of a sequential design since each family's own levels do.
 */
export function settingsPerFamily(settings: VerdictSettings, families: number): VerdictSettings {
  return { ...settings, confidence: 1 - (1 - settings.confidence) / Math.max(1, families) };
}

/** One comparison to decide: per side, the measured values of each window. */
export interface VerdictQuestion {
  /** A metric of the metric table with its statistic (`ttft_ms p95`): which way is better is read there. */
  metric: string;
  a: string;
  b: string;
  aWindows: ArrayLike<number>[];
  bWindows: ArrayLike<number>[];
  statistic: Statistic;
  /** Measured requests behind each side, where a window holds one summary value (a rate) instead of its requests. */
  requests?: [number, number];
}

export function statisticOf(sorted: Float64Array, statistic: Statistic): number | null {
  if (sorted.length === 0) return null;
  if (statistic === 'mean') return sorted.reduce((sum, value) => sum + value, 0) / sorted.length;
  return percentile(sorted, statistic === 'p50' ? 0.5 : 0.95);
}

/** Begins the note of a statistic its windows are too thin for: more windows of the same size cannot mend it. */
export const THIN_WINDOWS = 'n too small:';

const minimumPerWindow = (statistic: Statistic) => (statistic === 'p95' ? PERCENTILE_MIN_N.p95 : 1);

export interface WindowTest {
  question: VerdictQuestion;
  aValue: number | null;
  bValue: number | null;
  windows: [number, number];
  requests: [number, number];
  /** Why no verdict can be given; null when the test ran. */
  insufficient: string | null;
  logScale: boolean;
  meanDifference: number;
  standardError: number;
  df: number;
  pValue: number;
}

/**
 * The two-sample t test on per-window statistics. Windows are the unit of replication, so
 * both request noise and window-to-window drift are inside the per-window spread the test
 * uses; pooling requests instead would count drift as signal. Latencies compare as ratios
 * (log scale): drift and speed-ups are multiplicative.
 */
export function testWindows(question: VerdictQuestion, settings: VerdictSettings): WindowTest {
  const sides = [question.aWindows, question.bWindows].map((windows) =>
    windows.map((window) => sortedFinite(window)).filter((window) => window.length > 0),
  );
  const [aSide, bSide] = sides as [Float64Array[], Float64Array[]];
  const pooled = (side: Float64Array[]) => statisticOf(sortedFinite(side.flatMap((window) => Array.from(window))), question.statistic);
  const requests: [number, number] = question.requests ?? [
    aSide.reduce((n, w) => n + w.length, 0),
    bSide.reduce((n, w) => n + w.length, 0),
  ];
  const base = {
    question,
    aValue: pooled(aSide),
    bValue: pooled(bSide),
    windows: [aSide.length, bSide.length] as [number, number],
    requests,
    logScale: false,
    meanDifference: 0,
    standardError: 0,
    df: 0,
    pValue: 1,
  };
  const names = [question.a, question.b];
  const shortWindows = sides.findIndex((side) => side.length < settings.minWindowsPerSide);
  if (shortWindows >= 0)
    return {
      ...base,
      insufficient: `${names[shortWindows]} has ${sides[shortWindows]!.length} window(s); a verdict needs ${settings.minWindowsPerSide} per side (raise --repeats)`,
    };
  const fewRequests = requests.findIndex((n) => n < settings.minRequestsPerSide);
  if (fewRequests >= 0)
    return {
      ...base,
      insufficient: `${names[fewRequests]} has ${requests[fewRequests]} measured request(s); a verdict needs ${settings.minRequestsPerSide} per side (raise --requests)`,
    };
  const needed = minimumPerWindow(question.statistic);
  const thin = sides.findIndex((side) => side.some((window) => window.length < needed));
  if (thin >= 0)
    return {
      ...base,
      insufficient: `${THIN_WINDOWS} ${question.statistic} needs ${needed} requests in every window; ${names[thin]} has a window of ${Math.min(...sides[thin]!.map((w) => w.length))} (raise --requests)`,
    };

  const perWindow = sides.map((side) => side.map((window) => statisticOf(window, question.statistic)!));
  const logScale = perWindow.every((values) => values.every((value) => value > 0));
  const [a, b] = perWindow.map((values) => (logScale ? values.map(Math.log) : values)) as [number[], number[]];
  const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
  const variance = (values: number[]) => {
    const m = mean(values);
    return values.reduce((sum, value) => sum + (value - m) ** 2, 0) / (values.length - 1);
  };
  const meanDifference = mean(b) - mean(a);
  let standardError: number;
  let df: number;
  if (a.length === b.length) {
    // Equal windows per side: the pooled-variance test is robust to unequal spreads and keeps 2k − 2 degrees of freedom.
    df = a.length + b.length - 2;
    const pooledVariance = ((a.length - 1) * variance(a) + (b.length - 1) * variance(b)) / df;
    standardError = Math.sqrt(pooledVariance * (1 / a.length + 1 / b.length));
  } else {
    const va = variance(a) / a.length;
    const vb = variance(b) / b.length;
    standardError = Math.sqrt(va + vb);
    df = (va + vb) ** 2 / (va ** 2 / (a.length - 1) + vb ** 2 / (b.length - 1));
    if (!Number.isFinite(df)) df = a.length + b.length - 2;
  }
  let pValue: number;
  if (standardError > 0) pValue = 2 * (1 - studentTCdf(Math.abs(meanDifference / standardError), df));
  else pValue = meanDifference === 0 ? 1 : 0;
  return { ...base, insufficient: null, logScale, meanDifference, standardError, df, pValue };
}

/** Which way is better, from the metric table; a metric it does not hold is a caller's mistake, not a guess. */
export function directionOf(metric: string): boolean {
  const definition = metricDefinition(metric);
  if (!definition) throw new Error(`a verdict on "${metric}", which the metric table does not hold`);
  return definition.higherIsBetter;
}

/**
 * Holm's step-down over the tests that ran: each gets the level its rank earns while the steps keep
 * rejecting, and α / family once they stop. `pValues` holds null for a test that did not run.
 */
export function holmLevels(pValues: readonly (number | null)[], alpha: number): Map<number, { alpha: number; rejected: boolean }> {
  const tested = pValues.flatMap((pValue, index) => (pValue === null ? [] : [{ pValue, index }]));
  const family = tested.length;
  const levels = new Map<number, { alpha: number; rejected: boolean }>();
  let stillRejecting = true;
  tested
    .sort((x, y) => x.pValue - y.pValue)
    .forEach(({ pValue, index }, rank) => {
      const stepAlpha = alpha / (family - rank);
      if (stillRejecting && pValue <= stepAlpha) levels.set(index, { alpha: stepAlpha, rejected: true });
      else {
        stillRejecting = false;
        levels.set(index, { alpha: alpha / family, rejected: false });
      }
    });
  return levels;
}

/** A verdict row's fields that do not depend on the decision. */
function rowCommon(test: WindowTest, settings: VerdictSettings) {
  const { question } = test;
  return {
    metric: question.metric,
    a: question.a,
    b: question.b,
    a_value: test.aValue,
    b_value: test.bValue,
    difference: test.aValue === null || test.bValue === null ? null : test.bValue - test.aValue,
    equivalence_margin: settings.equivalenceMargin,
    windows: test.windows,
    requests: test.requests,
  };
}

/** The row of a comparison that could not be tested, with why. */
export function insufficientRow(test: WindowTest, settings: VerdictSettings): VerdictRow {
  return {
    ...rowCommon(test, settings),
    ci: null,
    relative_difference: null,
    relative_ci: null,
    confidence: null,
    verdict: 'insufficient data',
    note: test.insufficient,
  };
}

/** How a tested comparison was decided: its level, and the critical t values its two intervals use. */
export interface RowDecision {
  alpha: number;
  rejected: boolean;
  /** Half-width of the interval over the standard error: the interval excludes zero exactly when `rejected`. */
  intervalCritical: number;
  /** The same for the equivalence (TOST) interval. */
  equivalenceCritical: number;
  /** Said when the comparison is neither different nor equivalent. */
  openNote?: string;
}

/** The equivalence interval of a tested comparison, relative to A: within ±margin means `equivalent`. */
export function relativeEquivalenceInterval(test: WindowTest, critical: number): [number, number] {
  const half = critical * test.standardError;
  return [toRelative(test, test.meanDifference - half), toRelative(test, test.meanDifference + half)];
}

function toRelative(test: WindowTest, value: number): number {
  const aValue = test.aValue!;
  return test.logScale ? Math.exp(value) - 1 : aValue === 0 ? Number.NaN : value / Math.abs(aValue);
}

export function isWithinMargin(interval: readonly number[], margin: number): boolean {
  return interval.every((value) => Number.isFinite(value) && Math.abs(value) <= margin);
}

/** The row of a tested comparison, decided as `decision` says. */
export function decidedRow(test: WindowTest, settings: VerdictSettings, decision: RowDecision): VerdictRow {
  const higherIsBetter = directionOf(test.question.metric);
  const halfWidth = decision.intervalCritical * test.standardError;
  const interval: [number, number] = [test.meanDifference - halfWidth, test.meanDifference + halfWidth];
  const aValue = test.aValue!;
  const relativeCi: [number, number] = [toRelative(test, interval[0]), toRelative(test, interval[1])];
  let verdict: Verdict;
  if (decision.rejected) verdict = test.meanDifference > 0 === higherIsBetter ? 'faster' : 'slower';
  else if (isWithinMargin(relativeEquivalenceInterval(test, decision.equivalenceCritical), settings.equivalenceMargin))
    verdict = 'equivalent';
  else verdict = 'no significant difference';
  return {
    ...rowCommon(test, settings),
    ci: test.logScale ? [aValue * relativeCi[0], aValue * relativeCi[1]] : interval,
    relative_difference: toRelative(test, test.meanDifference),
    relative_ci: relativeCi,
    confidence: 1 - decision.alpha,
    verdict,
    note:
      verdict === 'no significant difference'
        ? (decision.openNote ??
          `not shown to differ, nor to be within ±${(settings.equivalenceMargin * 100).toFixed(0)} %: more windows would narrow the interval`)
        : null,
  };
}

/**
 * Decides a family of comparisons together: each gets a t test on its per-window
 * statistics, Holm's step-down procedure keeps the chance of any false faster/slower in
 * the family at or below 1 − confidence, and each interval is reported at the level its
 * decision used (so an interval excludes zero exactly when its verdict is faster/slower).
 * A difference that is not significant is called `equivalent` only when the interval at
 * twice that level's error (TOST) lies inside ±margin.
 */
export function decideVerdicts(questions: VerdictQuestion[], settings: VerdictSettings = DEFAULT_VERDICT_SETTINGS): VerdictRow[] {
  if (settings.sequential) throw new Error('a sequential look is decided by decideLook (sequential-verdicts.ts)');
  for (const { metric } of questions) directionOf(metric);
  const tests = questions.map((question) => testWindows(question, settings));
  const levels = holmLevels(
    tests.map((test) => (test.insufficient === null ? test.pValue : null)),
    1 - settings.confidence,
  );
  return tests.map((test, index): VerdictRow => {
    const level = levels.get(index);
    if (test.insufficient !== null || !level) return insufficientRow(test, settings);
    return decidedRow(test, settings, {
      ...level,
      intervalCritical: studentTQuantile(1 - level.alpha / 2, test.df),
      equivalenceCritical: studentTQuantile(1 - level.alpha, test.df),
    });
  });
}
