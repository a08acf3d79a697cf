import { recommendationText } from '../recommendation-text';
import type { ExperimentResult } from '../../../shared/contract/experiments';
import { conditionMetricColumns } from '../condition-columns';
import { formatNumber, formatTable } from '../format';
import { verdictTable } from '../verdict-table';
import { positiveInteger } from '../args';
import { listOf, text, type KindFlags } from './kind-flags';
import type { CliKind } from './cli-kind';
import { SWEEP_TEXT } from './sweep-text';

/** A sweep: every setting at every load level with its goodput against the SLO and the Pareto set, then verdicts within each load level. */
function sweepTable(result: ExperimentResult): string {
  const metricColumns = conditionMetricColumns(result.conditions);
  const sweepRows = [
    ['condition', 'windows', 'requests', ...metricColumns.headers, 'goodput', 'good ≥ target', 'Pareto'],
    ...result.conditions.map((condition) => [
      condition.name,
      String(condition.windows_run ?? condition.run_ids.length),
      String(condition.requests.attempted),
      ...metricColumns.cells(condition),
      `${formatNumber(condition.goodput_requests_per_s, 2)} req/s`,
      condition.meets_slo == null
        ? '—'
        : `${condition.meets_slo ? 'yes' : 'no'} (${formatNumber((condition.goodput_fraction ?? 0) * 100, 0)} %)`,
      condition.pareto ? 'yes' : '',
    ]),
  ];
  return `${formatTable(sweepRows)}\n\nverdicts (within each load level, against its first setting):\n${verdictTable(result.verdicts)}\n\n${recommendationText(result.recommendation, 'not chosen')}`;
}

/** --vary FIELD=V1,V2,... and --load concurrency=1,4,16. */
const SWEEP_FLAGS: KindFlags<'sweep'> = {
  flags: { vary: { type: 'string' }, load: { type: 'string' }, fixed: { type: 'boolean' } },
  fromFlags: (values, { usage }) => {
    const varied = /^([\w-]+)=(.+)$/.exec(text(values, 'vary') ?? '');
    if (!varied) return usage(`--vary expects FIELD=V1,V2,..., got "${text(values, 'vary') ?? ''}"`);
    const vary = { field: varied[1]!, values: listOf(varied[2]!) };
    if (vary.values.length < 2) usage('--vary needs at least two values');
    const fixed = values.fixed === true;
    const loadText = text(values, 'load');
    if (loadText === undefined) return { fields: { vary, fixed } };
    const load = /^concurrency=([\d,]+)$/.exec(loadText);
    if (!load) return usage(`--load expects concurrency=1,4,16, got "${loadText}"`);
    return { fields: { vary, fixed, loadConcurrencies: listOf(load[1]!).map((value) => positiveInteger('load', value, 1)) } };
  },
};

export const SWEEP_CLI: CliKind<'sweep'> = {
  text: SWEEP_TEXT,
  options: SWEEP_FLAGS,
  table: sweepTable,
};
