import type { CooldownWait } from './contract/experiments';

/** How the windows started: every cooldown wait, in one line. */
export function cooldownLine(waits: readonly CooldownWait[]): string {
  if (waits.length === 0) return 'cooldown: nothing to wait for (one window)';
  const skipped = waits.filter((wait) => wait.reached === null);
  if (skipped.length === waits.length) return `cooldown: not waited (${waits[0]!.reason ?? 'no reason given'})`;
  const reached = waits.filter((wait) => wait.reached === true);
  const timedOut = waits.filter((wait) => wait.reached === false);
  const longest = Math.max(...waits.map((wait) => wait.waited_ms)) / 1000;
  return [
    `cooldown: ${waits.length} waits, ${reached.length} back at the idle baseline (longest ${longest.toFixed(1)} s)`,
    ...(timedOut.length ? [`${timedOut.length} started warm at the timeout (${timedOut[0]!.reason ?? 'no reason given'})`] : []),
    ...(skipped.length ? [`${skipped.length} not waited (${skipped[0]!.reason ?? 'no reason given'})`] : []),
  ].join('; ');
}
