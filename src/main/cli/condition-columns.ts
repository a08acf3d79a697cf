import type { ConditionResult } from '../../shared/contract/experiments';
import { columnLabel, columnsShownIn, metricCellText, type FigureFormat } from '../../shared/metric-columns';
import { formatMs, formatNumber, formatPercentile } from './format';

/** The metric columns of every kind's conditions table in the terminal, from the metric table (`shows.conditions`). */
const CONDITION_COLUMNS = columnsShownIn('conditions');

const TERMINAL_FORMAT: FigureFormat = {
  ms: formatMs,
  percentile: formatPercentile,
  rate: (value, definition) => formatNumber(value, definition.digits),
};

export const conditionMetricHeaders = (): string[] => CONDITION_COLUMNS.map(({ metric, statistic }) => columnLabel(metric, statistic));

export const conditionMetricCells = (condition: ConditionResult): string[] =>
  CONDITION_COLUMNS.map((column) => metricCellText(condition, column, TERMINAL_FORMAT));
