import type { SteadyStateCheck } from '../../shared/contract/runs';
import { binomialCdf } from './quantile-slo';

export type { SteadyStateCheck };

export const STEADY_STATE_RULE = {
  /** The two-sided test's level: a steady window is flagged this often at most. */
  alpha: 0.01,
  /** Smaller changes between the halves are not called a trend, however many requests show them. */
  minChange: 0.1,
  /** Below this many completions in the window the check says it cannot tell. */
  minCompletions: 20,
} as const;

/**
 * Was the throughput steady over the measured window? The window is cut into two halves of
 * equal length; with a steady throughput each completion falls in either half with
 * probability ½, so the second half's count is Binomial(n, ½) given the total. A window is
 * flagged when an exact two-sided test rejects that at α = 0.01 and the halves' rates differ
 * by at least 10 %. Poisson completions are the noisiest steady case (a closed loop is more
 * regular), so the false-flag rate is at most α (measured in test/unit/steady-state.test.ts).
 */
export function steadyStateCheck(completionTimesMs: readonly number[], windowStartMs: number, windowEndMs: number): SteadyStateCheck {
  const rule = `completions in the window's two halves compared: flagged when an exact two-sided binomial test rejects "same throughput" at α = ${STEADY_STATE_RULE.alpha} and the rates differ by ≥ ${STEADY_STATE_RULE.minChange * 100} %`;
  const middle = (windowStartMs + windowEndMs) / 2;
  const inside = completionTimesMs.filter((time) => time >= windowStartMs && time <= windowEndMs);
  const first = inside.filter((time) => time < middle).length;
  const second = inside.length - first;
  const change = first === 0 ? null : second / first - 1;
  if (inside.length < STEADY_STATE_RULE.minCompletions || !(windowEndMs > windowStartMs))
    return {
      first_half: first,
      second_half: second,
      change,
      p_value: null,
      trending: false,
      rule: `${rule}; not judged below ${STEADY_STATE_RULE.minCompletions} completions`,
    };
  const n = inside.length;
  const lower = binomialCdf(second, n, 0.5);
  const upper = 1 - binomialCdf(second - 1, n, 0.5);
  const pValue = Math.min(1, 2 * Math.min(lower, upper));
  const trending = pValue < STEADY_STATE_RULE.alpha && (change === null || Math.abs(change) >= STEADY_STATE_RULE.minChange);
  return { first_half: first, second_half: second, change, p_value: pValue, trending, rule };
}
