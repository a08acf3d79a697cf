/**
 * NVML's clocks event reasons (nvidia-smi clocks_throttle_reasons.active), bit by bit, with
 * the names nvidia-smi gives the single-reason fields.
 */
export const THROTTLE_REASON_BITS = [
  { bit: 0x1, name: 'gpu_idle', slows: false },
  { bit: 0x2, name: 'applications_clocks_setting', slows: false },
  { bit: 0x4, name: 'sw_power_cap', slows: true },
  { bit: 0x8, name: 'hw_slowdown', slows: true },
  { bit: 0x10, name: 'sync_boost', slows: false },
  { bit: 0x20, name: 'sw_thermal_slowdown', slows: true },
  { bit: 0x40, name: 'hw_thermal_slowdown', slows: true },
  { bit: 0x80, name: 'hw_power_brake_slowdown', slows: true },
  { bit: 0x100, name: 'display_clock_setting', slows: false },
] as const;

export type ThrottleReasonName = (typeof THROTTLE_REASON_BITS)[number]['name'];

/** Every reason set in the mask, in bit order; an unknown bit is named by its value. */
export function throttleReasonNames(mask: number): string[] {
  const names: string[] = THROTTLE_REASON_BITS.filter((reason) => (mask & reason.bit) !== 0).map((reason) => reason.name);
  const known = THROTTLE_REASON_BITS.reduce((all, reason) => all | reason.bit, 0);
  const unknown = mask & ~known;
  if (unknown !== 0) names.push(`unknown_0x${unknown.toString(16)}`);
  return names;
}

/**
 * Whether the mask holds a reason that pulls clocks below what the load asked for. Idle,
 * application or display clock settings and sync boost are settings, not a slowdown.
 */
export function isSlowdown(mask: number): boolean {
  return THROTTLE_REASON_BITS.some((reason) => reason.slows && (mask & reason.bit) !== 0);
}

/** Only the slowing reasons of a mask, by name. */
export function slowdownReasonNames(mask: number): ThrottleReasonName[] {
  return THROTTLE_REASON_BITS.filter((reason) => reason.slows && (mask & reason.bit) !== 0).map((reason) => reason.name);
}
