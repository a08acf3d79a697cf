/**
 * Inter-arrival gaps for open-loop load. Gamma with shape = burstiness and mean 1/rate:
 * burstiness 1 is a Poisson process; below 1 burstier, above 1 more regular.
 */
export function arrivalGaps(rate: number, burstiness: number, random: () => number): () => number {
  const shape = burstiness;
  const scale = 1 / (rate * burstiness);
  const normal = () => {
    const u = Math.max(random(), Number.MIN_VALUE);
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
  };
  // Marsaglia–Tsang; for shape < 1 boost with U^(1/shape).
  const gamma = (k: number): number => {
    if (k < 1) return gamma(k + 1) * Math.pow(Math.max(random(), Number.MIN_VALUE), 1 / k);
    const d = k - 1 / 3;
    const c = 1 / Math.sqrt(9 * d);
    for (;;) {
      const x = normal();
      const v = (1 + c * x) ** 3;
      if (v <= 0) continue;
      const u = random();
      if (Math.log(Math.max(u, Number.MIN_VALUE)) < 0.5 * x * x + d - d * v + d * Math.log(v)) return d * v;
    }
  };
  return () => gamma(shape) * scale * 1000;
}
