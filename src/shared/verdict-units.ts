import { metricDefinition } from './metric-table';

/** The unit a verdict row's values are in, from the metric table; empty for a metric it does not hold. */
export function verdictUnit(metric: string): string {
  return metricDefinition(metric)?.unit ?? '';
}
