import fs from 'node:fs';
import path from 'node:path';
import { ErrorCode } from '../../../shared/errors';
import { AppError } from '../../core/errors';
import { isExecutable } from '../../core/which';
import { DEFAULT_CHECK_MARGIN, DEFAULT_CHECK_METRICS, DEFAULT_CHECK_REPEATS, type CheckResult } from '../../../shared/contract/check';
import { shellAccess } from '../../services/access';
import { parseOptions, positiveInteger, type CommandHandler } from '../args';
import { parseCheckMetrics, parseMargin } from '../check-flags';
import { formatNumber, formatTable } from '../format';
import { progressWriter } from '../progress';
import type { ServiceContainer } from '../../services';
import { openCliServices } from '../service-context';
import { CHECK_USAGE as USAGE } from '../usage';

const percent = (value: number | null) => (value === null ? '—' : `${value >= 0 ? '+' : '−'}${Math.abs(value * 100).toFixed(1)} %`);

function engineLine(label: string, side: CheckResult['baseline']): string {
  const engine = side.engine;
  const contaminated = side.contaminated.length
    ? `\n    CONTAMINATED: other processes competed during ${side.contaminated.map((id) => id.slice(0, 8)).join(', ')}; its figures may be off`
    : '';
  const bunched = side.bunched?.length
    ? `\n    BUNCHED TOKENS in ${side.bunched.map((id) => id.slice(0, 8)).join(', ')}: some answers reached the client faster than the server decoded them, so their TPOT measures delivery (inferlab runs show ID)`
    : '';
  return `  ${label}: ${side.run_ids.length} run(s) from ${side.measured_at.slice(0, 16).replace('T', ' ')} ${side.run_ids.map((id) => id.slice(0, 8)).join(', ')}; engine ${engine.commit ?? 'unknown build'} (${engine.backend ?? 'backend unknown'})${engine.server_path ? ` ${engine.server_path}` : ''}${contaminated}${bunched}`;
}

export function checkTable(result: CheckResult): string {
  const rows = [
    ['metric', 'baseline', 'candidate', 'change', 'worse by at least', 'windows', 'verdict'],
    ...result.metrics.map((metric) => [
      metric.metric,
      formatNumber(metric.baseline_value, 2),
      formatNumber(metric.candidate_value, 2),
      percent(metric.ratio === null ? null : metric.ratio - 1),
      metric.worse_by_at_least === null ? '—' : percent(metric.worse_by_at_least),
      `${metric.baseline_windows.length} vs ${metric.candidate_windows.length}`,
      metric.verdict === 'regression' ? 'REGRESSION' : metric.verdict,
    ]),
  ];
  const notes = result.metrics.filter((metric) => metric.note).map((metric) => `  ${metric.metric}: ${metric.note}`);
  const verdict =
    result.result === 'regression'
      ? `REGRESSION: worse than the baseline by more than ${(result.margin * 100).toFixed(1)} %, beyond doubt`
      : result.result === 'pass'
        ? `pass: no metric is worse than the baseline by more than ${(result.margin * 100).toFixed(1)} % beyond doubt`
        : 'no decision: a metric had too few windows or requests (see the notes)';
  const drift = result.interleaved
    ? ['  the baseline was measured again beside the candidate (ABBA windows): drift since the stored baseline weighs on both sides']
    : ['  the baseline was not measured again: drift since it was stored counts as change (--interleave measures it beside the candidate)'];
  return [
    ...(result.stored_baseline ? [engineLine('stored baseline', result.stored_baseline)] : []),
    engineLine('baseline', result.baseline),
    engineLine('candidate', result.candidate),
    ...drift,
    '',
    formatTable(rows),
    ...(notes.length ? ['', ...notes] : []),
    '',
    verdict,
    `rule: ${result.rule} (one-sided, ${(result.alpha * 100).toFixed(0)} % in all)`,
  ].join('\n');
}

/**
 * `inferlab check`: exit 0 when the candidate passes, 1 on a regression beyond the margin, 2 when
 * it cannot be judged (another model file or workload revision, too few windows, bad flags).
 */
export const checkCommand: CommandHandler = async (args, signal) => {
  const { values } = parseOptions(
    args,
    {
      baseline: { type: 'string' },
      condition: { type: 'string' },
      run: { type: 'string', multiple: true },
      metrics: { type: 'string' },
      margin: { type: 'string' },
      repeats: { type: 'string' },
      set: { type: 'string', multiple: true },
      engine: { type: 'string' },
      interleave: { type: 'boolean' },
      db: { type: 'string' },
      json: { type: 'boolean' },
    },
    USAGE,
  );
  const usage = (message: string): never => {
    throw new AppError(ErrorCode.Usage, `${message}\n\nUsage: ${USAGE}`);
  };
  if (!values.baseline) usage('--baseline RUN_OR_EXPERIMENT is required');
  const candidateRuns = (values.run ?? []).flatMap((entry) => entry.split(',')).filter(Boolean);
  if (candidateRuns.length > 0 && (values.engine || values.set || values.repeats || values.interleave))
    usage('--run judges stored runs; --engine, --set, --repeats and --interleave are for measuring the candidate again');
  const query = {
    baseline: values.baseline!,
    condition: values.condition ?? null,
    candidateRuns,
    metrics: parseCheckMetrics(values.metrics ?? DEFAULT_CHECK_METRICS),
    margin: values.margin === undefined ? DEFAULT_CHECK_MARGIN : parseMargin(values.margin),
    repeats: positiveInteger('repeats', values.repeats, DEFAULT_CHECK_REPEATS),
    settings: values.set ?? [],
    interleave: values.interleave === true,
  };
  if (values.engine) {
    const engine = path.resolve(values.engine);
    if (!fs.existsSync(engine) || !isExecutable(engine)) usage(`--engine ${engine} is not an executable llama-server`);
    // The candidate build: every server this command starts is this binary (the CLI only; RPC cannot name one).
    process.env.INFERLAB_LLAMA_SERVER = engine;
  }
  const container = await openCliServices(values.db, shellAccess());
  // The baseline's own build, for interleaved windows: a second set of services on the same database.
  let baselineServices: ServiceContainer | null = null;
  try {
    const progress = progressWriter();
    const onStatus = (line: string) => progress.line(line);
    const result = await container.runs.check(query, {
      signal,
      onStatus,
      runOnServer: async (spec, serverPath) => {
        baselineServices ??= await openCliServices(values.db, shellAccess(), serverPath);
        return baselineServices.runs.run(spec, { signal, onStatus });
      },
    });
    progress.end();
    if (values.json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    else process.stdout.write(`${checkTable(result)}\n`);
    return result.result === 'regression' ? 1 : result.result === 'pass' ? 0 : 2;
  } finally {
    await (baselineServices as ServiceContainer | null)?.dispose();
    await container.dispose();
  }
};
