import type { ConditionResult } from '../../shared/contract/experiments';
import { columnLabel, conditionColumns, metricCellText, type FigureFormat } from '../../shared/metric-columns';
import { formatMs, formatNumber, formatPercentile } from './format';

const TERMINAL_FORMAT: FigureFormat = {
  ms: formatMs,
  percentile: formatPercentile,
  rate: (value, definition) => formatNumber(value, definition.digits),
};

/**
 * The metric columns of every kind's conditions table in the terminal, from the metric table
 * (`shows.conditions`, or `shows.embeddingConditions` for an embeddings experiment).
 */
export function conditionMetricColumns(conditions: readonly ConditionResult[]): {
  headers: string[];
  cells: (condition: ConditionResult) => string[];
} {
  const columns = conditionColumns('conditions', conditions);
  return {
    headers: columns.map(({ metric, statistic }) => columnLabel(metric, statistic)),
    cells: (condition) => columns.map((column) => metricCellText(condition, column, TERMINAL_FORMAT)),
  };
}
