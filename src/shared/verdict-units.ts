/** The unit a verdict row's values are in: throughput verdicts compare tokens per second, the rest milliseconds. */
export function verdictUnit(metric: string): 'tok/s' | 'ms' {
  return metric.startsWith('output_tokens_per_s') ? 'tok/s' : 'ms';
}
