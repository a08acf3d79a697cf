import type { VerdictRow } from '../../shared/contract/experiments';
import {
  decidedRow,
  decideVerdicts,
  directionOf,
  holmLevels,
  insufficientRow,
  testWindows,
  type SequentialDesign,
  type VerdictQuestion,
  type VerdictSettings,
  type WindowTest,
  THIN_WINDOWS,
} from './window-verdicts';
import { boundaryZ, lastLook, lookStatistic, sequentialBoundary, sequentialPValue, zOfT, type LookPlan } from './sequential-boundary';

/*
 * A family of comparisons decided as one look of a group-sequential design (sequential-boundary.ts):
 * every comparison is tested on the windows of each look so far, its running maximum gives a
 * sequential p-value, and Holm's procedure over those p-values assigns each its level. A comparison
 * is decided at the first look whose statistic crossed its level's boundary (a difference), or whose
 * equivalence interval at that look lay within the margin (both one-sided tests crossing); its row is
 * that look's. One still open at the last look is `no significant difference`, as in the fixed design.
 */

/** Inverses already found: a design has few boundaries (one per Holm level and look), asked again at every look. */
const tOfZSeen = new Map<string, number>();

/** The t with the given z (the inverse of zOfT), for the intervals a boundary implies. */
function tOfZ(z: number, df: number): number {
  const key = `${z}|${df}`;
  let t = tOfZSeen.get(key);
  if (t === undefined) {
    t = invertZOfT(z, df);
    if (tOfZSeen.size > 10_000) tOfZSeen.clear();
    tOfZSeen.set(key, t);
  }
  return t;
}

function invertZOfT(z: number, df: number): number {
  if (!Number.isFinite(z)) return z;
  if (z < 0) return -invertZOfT(-z, df);
  let low = 0;
  let high = Math.max(1, z);
  while (zOfT(high, df) < z) high *= 2;
  for (let i = 0; i < 100 && high - low > 1e-10 * high; i++) {
    const middle = (low + high) / 2;
    if (zOfT(middle, df) < z) low = middle;
    else high = middle;
  }
  return (low + high) / 2;
}

interface Look {
  windows: number;
  test: WindowTest;
  /** The look statistic of the difference: its z weighted by the share of windows seen. */
  statistic: number;
}

/** The first `windows` windows of each side, with a rate's request counts scaled to them. */
function prefixOf(question: VerdictQuestion, windows: number): VerdictQuestion {
  const share = (side: ArrayLike<number>[], count: number) =>
    Math.round((count * Math.min(windows, side.length)) / Math.max(1, side.length));
  return {
    ...question,
    aWindows: question.aWindows.slice(0, windows),
    bWindows: question.bWindows.slice(0, windows),
    requests: question.requests && [share(question.aWindows, question.requests[0]), share(question.bWindows, question.requests[1])],
  };
}

function tStatistic(test: WindowTest): number {
  if (test.standardError > 0) return test.meanDifference / test.standardError;
  return test.meanDifference === 0 ? 0 : Math.sign(test.meanDifference) * Number.POSITIVE_INFINITY;
}

/** Every look of a comparison that could be tested, from the first the design allows to the windows so far. */
function looksOf(question: VerdictQuestion, settings: VerdictSettings, plan: LookPlan): { looks: Look[]; latest: WindowTest } {
  const seen = Math.max(question.aWindows.length, question.bWindows.length);
  const looks: Look[] = [];
  for (const windows of plan.looks) {
    if (windows > seen) break;
    const test = testWindows(prefixOf(question, windows), settings);
    if (test.insufficient !== null) continue;
    const weight = Math.min(test.windows[0], test.windows[1]);
    looks.push({ windows, test, statistic: lookStatistic(zOfT(tStatistic(test), test.df), weight, plan) });
  }
  const latest = looks.at(-1)?.test ?? testWindows(prefixOf(question, Math.min(seen, lastLook(plan))), settings);
  return { looks, latest };
}

/** The first look a comparison was decided at under level α (null while it is open), and the intervals' criticals. */
function decidingLook(looks: Look[], plan: LookPlan, alpha: number, rejected: boolean, settings: VerdictSettings) {
  const difference = sequentialBoundary(plan, alpha, 'two-sided');
  const equivalence = sequentialBoundary(plan, alpha, 'one-sided');
  const criticals = (look: Look) => {
    const weight = Math.min(look.test.windows[0], look.test.windows[1]);
    return {
      intervalCritical: tOfZ(boundaryZ(plan, difference, weight), look.test.df),
      equivalenceCritical: tOfZ(boundaryZ(plan, equivalence, weight), look.test.df),
    };
  };
  for (const look of looks) {
    const decision = { alpha, rejected, ...criticals(look) };
    if (rejected && Math.abs(look.statistic) > difference) return { look, decision };
    if (!rejected && decidedRow(look.test, settings, decision).verdict === 'equivalent') return { look, decision };
  }
  const last = looks.at(-1)!;
  return { look: null, decision: { alpha, rejected: false, ...criticals(last) } };
}

/**
 * The family's verdicts at this look: `settings.sequential` names the design's last look; the
 * windows each question holds are the windows so far, in the order they ran.
 */
export function decideLook(questions: VerdictQuestion[], settings: VerdictSettings & { sequential: SequentialDesign }): VerdictRow[] {
  for (const { metric } of questions) directionOf(metric);
  const plan: LookPlan = { looks: settings.sequential.looks };
  const compared = questions.map((question) => looksOf(question, settings, plan));
  const pValues = compared.map(({ looks }) =>
    looks.length === 0 ? null : sequentialPValue(plan, Math.max(...looks.map((look) => Math.abs(look.statistic))), 'two-sided'),
  );
  const levels = holmLevels(pValues, 1 - settings.confidence);
  return compared.map(({ looks, latest }, index): VerdictRow => {
    const level = levels.get(index);
    if (!level || looks.length === 0) return insufficientRow(latest, settings);
    const { look, decision } = decidingLook(looks, plan, level.alpha, level.rejected, settings);
    if (look) return decidedRow(look.test, settings, decision);
    const seen = looks.at(-1)!.windows;
    return decidedRow(latest, settings, {
      ...decision,
      openNote:
        seen < lastLook(plan)
          ? `open after ${seen} of ${lastLook(plan)} windows: neither a difference nor ±${(settings.equivalenceMargin * 100).toFixed(0)} % shown yet`
          : undefined,
    });
  });
}

/**
 * Whether a verdict needs no more windows: decided, or without a verdict for a reason more windows
 * cannot mend (withheld for contamination, or windows too thin for the statistic).
 */
export function verdictSettled(row: VerdictRow): boolean {
  return (
    row.verdict === 'faster' ||
    row.verdict === 'slower' ||
    row.verdict === 'equivalent' ||
    Boolean(row.note?.startsWith('no verdict:') || row.note?.startsWith(THIN_WINDOWS))
  );
}

/** Whether a look's verdicts need no more windows: each one settled. */
export const everyVerdictSettled = (rows: readonly VerdictRow[]): boolean => rows.every(verdictSettled);

/** The fixed design's verdicts, or one look of the sequential design's, as the settings say. */
export function decideFamily(questions: VerdictQuestion[], settings: VerdictSettings): VerdictRow[] {
  return settings.sequential
    ? decideLook(questions, { ...settings, sequential: settings.sequential })
    : decideVerdicts(questions, settings);
}
