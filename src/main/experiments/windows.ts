/**
 * The order conditions run in: every window runs each condition once, the order rotated
 * from window to window (A B C, B C A, …) so that drift over time (thermal state, other
 * load) does not always land on the same condition.
 */
export function windowSchedule<T>(conditions: readonly T[], repeats: number): { window: number; condition: T }[] {
  const schedule: { window: number; condition: T }[] = [];
  for (let window = 0; window < repeats; window++) {
    for (let i = 0; i < conditions.length; i++) schedule.push({ window, condition: conditions[(i + window) % conditions.length]! });
  }
  return schedule;
}

/** `total` units shared out over `windows` as evenly as possible, earlier windows taking the remainder. */
export function spreadOverWindows(total: number, windows: number): number[] {
  return Array.from({ length: windows }, (_, window) => Math.floor(total / windows) + (window < total % windows ? 1 : 0));
}
