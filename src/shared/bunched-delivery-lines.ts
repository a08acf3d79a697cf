import type { WindowDelivery } from './contract/experiments';

/** A window where more than this share of the judged requests came bunched has its TPOT p50 taken from delivery. */
const MOSTLY_BUNCHED = 0.5;

/**
 * One warning under an experiment's table when any condition's answers reached the client
 * bunched (metrics/bunched-delivery.ts): how many per condition, and the windows where most
 * did, since a window's TPOT p50 is what the verdicts compare. Empty when none came bunched.
 */
export function bunchedDeliveryLines(conditions: readonly { name: string; delivery?: WindowDelivery[] }[]): string[] {
  const parts: string[] = [];
  let anyMostly = false;
  for (const condition of conditions) {
    const windows = condition.delivery ?? [];
    const bunched = windows.reduce((sum, window) => sum + window.bunched_requests, 0);
    if (bunched === 0) continue;
    const judged = windows.reduce((sum, window) => sum + window.judged_requests, 0);
    const mostly = windows
      .map((window, index) => ({ ...window, number: index + 1 }))
      .filter((window) => window.judged_requests > 0 && window.bunched_requests > MOSTLY_BUNCHED * window.judged_requests)
      .map((window) => `window ${window.number}: ${window.bunched_requests} of ${window.judged_requests}`);
    anyMostly ||= mostly.length > 0;
    parts.push(`${condition.name} ${bunched} of ${judged} requests${mostly.length > 0 ? ` (over half in ${mostly.join(', ')})` : ''}`);
  }
  if (parts.length === 0) return [];
  const inWindows = anyMostly ? ' In a window where most did, its TPOT p50, the figure the verdicts compare, measures delivery too.' : '';
  return [
    `BUNCHED TOKENS: ${parts.join('; ')}. Those answers reached the client much faster than the server decoded them: their TPOT and ITL measure delivery, not decoding.${inWindows} The server's HTTP thread or this client was short of CPU (server threads on every core?): leave a core free (--set threads=N).`,
  ];
}
