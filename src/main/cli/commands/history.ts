import {
  metricSpecProblem,
  readMetricSpec,
  type HistoryBuild,
  type HistoryConfiguration,
  type MetricHistory,
} from '../../../shared/contract/history';
import { ErrorCode } from '../../../shared/errors';
import { AppError } from '../../core/errors';
import { shellAccess } from '../../services/access';
import { parseOptions, type CommandHandler } from '../args';
import { formatNumber, formatTable } from '../format';
import { openCliServices } from '../service-context';
import { HISTORY_USAGE as USAGE } from '../usage';

function value(number: number | null, unit: string): string {
  return number === null ? '—' : `${formatNumber(number, Math.abs(number) < 10 ? 2 : 1)} ${unit}`;
}

function change(build: HistoryBuild, index: number): string {
  if (index === 0) return 'first build';
  return build.changePercent === null ? '—' : `${build.changePercent >= 0 ? '+' : ''}${build.changePercent.toFixed(1)} %`;
}

function heading(configuration: HistoryConfiguration): string {
  const model = `${configuration.model.ref ?? 'unknown model'}${configuration.model.sha256 ? ` (sha256 ${configuration.model.sha256.slice(0, 12)})` : ''}`;
  const workload = `${configuration.workload.name ?? 'unknown workload'} @ ${configuration.workload.revision?.slice(0, 12) ?? 'unknown revision'}`;
  return `configuration ${configuration.key}: ${model}, ${workload}, ${configuration.load}, profile ${configuration.profileName ?? 'not recorded'}`;
}

/** One table per configuration: a row per build, then why any run or interval has no value. */
function configurationTable(history: MetricHistory, configuration: HistoryConfiguration): string {
  const rows = configuration.builds.map((build, index) => [
    build.label,
    `${build.runs.length} (${build.runs.map((run) => (run.value === null ? '—' : formatNumber(run.value, 2))).join(', ')})`,
    value(build.mean, history.unit),
    build.interval ? `[${formatNumber(build.interval[0], 2)}, ${formatNumber(build.interval[1], 2)}]` : (build.intervalNote ?? '—'),
    change(build, index),
  ]);
  const reasons = configuration.builds.flatMap((build) =>
    build.runs.filter((run) => run.note !== null).map((run) => `  run ${run.runId.slice(0, 8)} (${build.label}): ${run.note}`),
  );
  return [
    heading(configuration),
    formatTable([['build', 'runs (values)', 'mean', '95 % interval', 'change vs first build'], ...rows]),
    ...reasons,
  ].join('\n');
}

function historyText(history: MetricHistory): string {
  const title = `${history.metric}${history.statistic ? ` ${history.statistic}` : ''} (${history.unit}; ${history.higherIsBetter ? 'higher' : 'lower'} is better) across engine builds`;
  return [
    title,
    ...history.configurations.map((configuration) => configurationTable(history, configuration)),
    ...history.notes.map((note) => `note: ${note}`),
    ...(history.configurations.length > 1 ? ['note: narrow with --model and --workload, or pick one configuration with --key KEY.'] : []),
  ].join('\n\n');
}

export const historyCommand: CommandHandler = async (args) => {
  const { values } = parseOptions(
    args,
    {
      metric: { type: 'string' },
      model: { type: 'string' },
      workload: { type: 'string' },
      key: { type: 'string' },
      db: { type: 'string' },
      json: { type: 'boolean' },
    },
    USAGE,
  );
  if (values.metric === undefined)
    throw new AppError(ErrorCode.Usage, `history needs --metric, e.g. --metric tpot_ms:p50\n\nUsage: ${USAGE}`);
  // Checked before the database opens: a typo costs nothing and names what is allowed.
  if (!readMetricSpec(values.metric)) throw new AppError(ErrorCode.InvalidInput, metricSpecProblem(values.metric));
  const container = await openCliServices(values.db, shellAccess());
  try {
    const history = await container.services.runs.history({
      metric: values.metric,
      model: values.model ?? null,
      workload: values.workload ?? null,
      key: values.key ?? null,
    });
    process.stdout.write(values.json ? `${JSON.stringify(history, null, 2)}\n` : `${historyText(history)}\n`);
    return 0;
  } finally {
    await container.dispose();
  }
};
