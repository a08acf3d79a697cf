/** One power reading on the run's clock (ms); null where the GPU did not report power. */
export interface PowerReading {
  t: number;
  powerW: number | null;
}

export interface PowerIntegral {
  /** null when fewer than two readings with power fall inside the window. */
  joules: number | null;
  /** The span between the first and last reading used: the part of the window the energy covers. */
  coveredMs: number;
  readings: number;
}

/**
 * Energy over [start, end] by the trapezoid rule between consecutive readings inside the
 * window. Nothing is extrapolated to the window's edges: the covered span says how much of
 * the window the figure stands for. A reading without power splits the series, and the
 * interval across it is not counted (and not covered).
 */
export function integratePower(readings: readonly PowerReading[], start: number, end: number): PowerIntegral {
  const inside = readings.filter((reading) => reading.t >= start && reading.t <= end).sort((a, b) => a.t - b.t);
  let joules = 0;
  let coveredMs = 0;
  let intervals = 0;
  for (let i = 1; i < inside.length; i++) {
    const before = inside[i - 1]!;
    const after = inside[i]!;
    if (before.powerW === null || after.powerW === null) continue;
    const ms = after.t - before.t;
    joules += ((before.powerW + after.powerW) / 2) * (ms / 1000);
    coveredMs += ms;
    intervals += 1;
  }
  const used = inside.filter((reading) => reading.powerW !== null).length;
  return { joules: intervals === 0 ? null : joules, coveredMs, readings: used };
}
