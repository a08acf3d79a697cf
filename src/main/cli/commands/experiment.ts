import fs from 'node:fs';
import path from 'node:path';
import type { StartExperimentSpec } from '../../../shared/contract';
import type { ExperimentResult } from '../../../shared/contract/experiments';
import { ErrorCode } from '../../../shared/errors';
import { EXPERIMENT_DEFAULTS } from '../../../shared/experiment-defaults';
import { AppError } from '../../core/errors';
import { parseQuantFiles } from '../../experiments/quantization';
import { shellAccess } from '../../services/access';
import { checkExperimentShape, checkExperimentSpec } from '../../services/experiment-spec';
import { agreementCell, constraintsFromFlags, qualityLines } from '../../experiments/recommend';
import { renderExperimentReport } from '../../experiments/report';
import { parseOptions, positiveInteger, type CommandHandler } from '../args';
import { progressWriter } from '../progress';
import { openCliServices } from '../service-context';
import { verdictTable } from '../verdict-table';
import { formatMs, formatNumber, formatPercentile, formatTable } from '../format';
import { parseSlo } from './run';
import { EXPERIMENT_USAGE as USAGE, REPORT_USAGE, DECIDE_USAGE } from '../usage';

export function experimentTable(result: ExperimentResult): string {
  if (result.kind === 'sweep') {
    const sweepRows = [
      ['condition', 'windows', 'requests', 'TTFT p50', 'TTFT p95', 'TPOT p50', 'output tok/s', 'goodput', 'met SLO', 'Pareto'],
      ...result.conditions.map((condition) => [
        condition.name,
        String(condition.windows_run ?? condition.run_ids.length),
        String(condition.requests.attempted),
        formatMs(condition.metrics.ttft_ms.p50),
        formatPercentile(condition.metrics.ttft_ms, 'p95'),
        formatMs(condition.metrics.tpot_ms.p50),
        formatNumber(condition.throughput.output_tokens_per_s),
        `${formatNumber(condition.goodput_requests_per_s, 2)} req/s`,
        condition.meets_slo == null
          ? '—'
          : `${condition.meets_slo ? 'yes' : 'no'} (${formatNumber((condition.goodput_fraction ?? 0) * 100, 0)} %)`,
        condition.pareto ? 'yes' : '',
      ]),
    ];
    return `${formatTable(sweepRows)}\n\nverdicts (within each load level, against its first setting):\n${verdictTable(result.verdicts)}\n\nrecommendation: ${result.recommendation.choice ?? '—'}: ${result.recommendation.reason}\n${result.recommendation.excluded.map((item) => `  not chosen ${item.name}: ${item.reason}`).join('\n')}`;
  }
  const rows = [
    [
      'condition',
      'requests',
      'TTFT p50',
      'TTFT p95',
      'TPOT p50',
      'tok/s',
      'cached tok',
      ...(result.kind === 'quant' ? ['size', 'load', 'token agreement', 'KLD', 'same top'] : []),
      'contaminated',
    ],
    ...result.conditions.map((condition) => [
      condition.name,
      String(condition.requests.attempted),
      formatMs(condition.metrics.ttft_ms.p50),
      formatPercentile(condition.metrics.ttft_ms, 'p95'),
      formatMs(condition.metrics.tpot_ms.p50),
      formatNumber(condition.throughput.output_tokens_per_s),
      String(condition.evidence.cached_prompt_tokens),
      ...(result.kind === 'quant'
        ? [
            `${((condition.file_bytes ?? 0) / 2 ** 20).toFixed(1)} MiB`,
            formatMs(condition.load_ms),
            agreementCell(condition),
            condition.kld_mean == null
              ? '—'
              : condition.kld_mean !== 0 && condition.kld_mean < 0.001
                ? condition.kld_mean.toExponential(2)
                : condition.kld_mean.toFixed(4),
            condition.same_top_p == null ? '—' : `${(condition.same_top_p * 100).toFixed(1)} %`,
          ]
        : []),
      condition.contaminated ? `YES: ${condition.contamination_reason}` : 'no',
    ]),
  ];
  const evidence = result.conditions
    .filter((condition) => condition.cache_evidence || condition.cold_starts)
    .map(
      (condition) =>
        `  ${condition.name}: ${condition.cache_evidence?.summary ?? ''}${condition.cold_starts ? `; ${condition.cold_starts.starts.length} fresh starts, spawn → ready p50 ${formatMs(condition.cold_starts.spawn_to_ready_ms.p50)}, first-request TTFT p50 ${formatMs(condition.cold_starts.ttft_ms.p50)}` : ''}`,
    );
  const quality = result.kind === 'quant' ? `\n\n${qualityLines(result).join('\n')}` : '';
  const cache =
    evidence.length > 0 ? `\n\ncache evidence (per request, from the server's cached-token counts):\n${evidence.join('\n')}` : '';
  return `${formatTable(rows)}${quality}${cache}\n\nverdicts (each condition against the baseline, A):\n${verdictTable(result.verdicts)}\n\nrecommendation: ${result.recommendation.choice ?? '—'}: ${result.recommendation.reason}\n${result.recommendation.excluded.map((item) => `  excluded ${item.name}: ${item.reason}`).join('\n')}`;
}

export const experimentCommand: CommandHandler = async (args, signal) => {
  const [kind, ...rest] = args;
  if (kind !== 'warmcold' && kind !== 'quant' && kind !== 'sweep')
    throw new AppError(ErrorCode.Usage, `Unknown experiment "${kind ?? ''}"\n\nUsage: ${USAGE}`);
  const { values } = parseOptions(
    rest,
    {
      model: { type: 'string' },
      workload: { type: 'string' },
      quants: { type: 'string' },
      repeats: { type: 'string' },
      requests: { type: 'string' },
      concurrency: { type: 'string' },
      'skip-cache-reset': { type: 'boolean' },
      'vram-budget': { type: 'string' },
      'min-agreement': { type: 'string' },
      'min-acceptance': { type: 'string' },
      slo: { type: 'string' },
      'kld-text': { type: 'string' },
      files: { type: 'string' },
      'max-kld': { type: 'string' },
      'acceptance-alpha': { type: 'string' },
      objective: { type: 'string' },
      profile: { type: 'string' },
      set: { type: 'string', multiple: true },
      db: { type: 'string' },
      json: { type: 'boolean' },
      report: { type: 'string' },
      vary: { type: 'string' },
      load: { type: 'string' },
      'cold-starts': { type: 'string' },
    },
    USAGE,
  );
  const usage = (message: string): never => {
    throw new AppError(ErrorCode.Usage, `${message}\n\nUsage: ${USAGE}`);
  };
  if (values.files !== undefined && (kind !== 'quant' || values.model !== undefined || values.quants !== undefined))
    usage('--files replaces --model and --quants, and only in experiment quant');
  const files = values.files === undefined ? null : parseQuantFiles(values.files).map((file) => ({ name: file.name, path: file.file }));
  if (!values.model && !files) usage('--model is required');
  const quants = (values.quants ?? 'f16,q8_0,q4_k_m')
    .split(',')
    .map((quant) => quant.trim().toLowerCase())
    .filter(Boolean);
  if (kind === 'quant' && !files && (quants.length < 2 || quants.some((quant) => !/^[a-z0-9_]+$/.test(quant))))
    usage(`--quants needs two or more types like f16,q8_0,q4_k_m, got "${values.quants}"`);
  const slo = parseSlo(values.slo);
  let vary: { field: string; values: string[] } | null = null;
  let loadConcurrencies: number[] | null = null;
  if (kind === 'sweep') {
    const match = /^([\w-]+)=(.+)$/.exec(values.vary ?? '');
    if (!match) usage(`--vary expects FIELD=V1,V2,..., got "${values.vary ?? ''}"`);
    vary = {
      field: match![1]!,
      values: match![2]!
        .split(',')
        .map((value) => value.trim())
        .filter(Boolean),
    };
    if (vary.values.length < 2) usage('--vary needs at least two values');
    if (values.load !== undefined) {
      const load = /^concurrency=([\d,]+)$/.exec(values.load);
      if (!load) usage(`--load expects concurrency=1,4,16, got "${values.load}"`);
      loadConcurrencies = load![1]!
        .split(',')
        .filter(Boolean)
        .map((value) => positiveInteger('load', value, 1));
    }
  }
  // The same spec the UI sends; every flag has its field.
  const spec: StartExperimentSpec = {
    kind,
    model: values.model ?? '',
    quants,
    files,
    workload: values.workload ?? '',
    repeats: positiveInteger('repeats', values.repeats, EXPERIMENT_DEFAULTS.repeats),
    requestsPerWindow:
      values.requests === undefined ? EXPERIMENT_DEFAULTS.requestsPerWindow : positiveInteger('requests', values.requests, 1),
    concurrency: positiveInteger('concurrency', values.concurrency, 1),
    profileName: values.profile ?? 'default',
    settings: values.set ?? [],
    constraints:
      kind === 'quant' ? constraintsFromFlags(values, slo) : { vramBudgetMib: null, minAgreement: null, minAcceptance: null, slo },
    kldTextFile: values['kld-text'] ? path.resolve(values['kld-text']) : null,
    coldStarts: values['cold-starts'] === undefined ? null : positiveInteger('cold-starts', values['cold-starts'], 1),
    skipCacheReset: values['skip-cache-reset'] ?? false,
    vary,
    loadConcurrencies,
  };
  try {
    checkExperimentShape(spec);
  } catch (error) {
    usage((error as Error).message);
  }
  // Files and models are checked before the database is opened.
  const access = shellAccess();
  await checkExperimentSpec(spec, access);

  const container = await openCliServices(values.db, access);
  try {
    const progress = progressWriter();
    const result = await container.experiments.run(spec, { signal, onStatus: (line) => progress.line(line) });
    if (values.report) fs.writeFileSync(path.resolve(values.report), renderExperimentReport(result));
    if (values.json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    else process.stdout.write(`${experimentTable(result)}\n`);
    return 0;
  } finally {
    await container.dispose();
  }
};

export const reportCommand: CommandHandler = async (args) => {
  const { values, positionals } = parseOptions(args, { out: { type: 'string' }, db: { type: 'string' } }, REPORT_USAGE, true);
  if (positionals.length !== 1 || !values.out)
    throw new AppError(ErrorCode.Usage, `report needs one experiment id and --out FILE.html\n\nUsage: ${REPORT_USAGE}`);
  const container = await openCliServices(values.db, shellAccess());
  try {
    const result = await container.services.experiments.get(positionals[0]!);
    if (!result) throw new AppError(ErrorCode.InvalidInput, `Experiment ${positionals[0]} has no results to report (it did not finish)`);
    fs.writeFileSync(path.resolve(values.out), renderExperimentReport(result));
    process.stdout.write(`${path.resolve(values.out)}\n`);
    return 0;
  } finally {
    await container.dispose();
  }
};

/** A decision record: which condition was chosen from an experiment, on which runs, under which criteria, and why. */
export const decideCommand: CommandHandler = async (args) => {
  const { values, positionals } = parseOptions(
    args,
    { choose: { type: 'string' }, reason: { type: 'string' }, by: { type: 'string' }, db: { type: 'string' }, json: { type: 'boolean' } },
    DECIDE_USAGE,
    true,
  );
  if (positionals.length !== 1 || !values.choose || !values.reason)
    throw new AppError(ErrorCode.Usage, `decide needs an experiment id, --choose and --reason\n\nUsage: ${DECIDE_USAGE}`);
  const container = await openCliServices(values.db, shellAccess());
  try {
    const record = await container.services.experiments.decide(
      positionals[0]!,
      values.choose,
      values.reason,
      values.by ?? process.env.USER ?? 'unknown',
    );
    process.stdout.write(
      values.json ? `${JSON.stringify(record, null, 2)}\n` : `decision ${record.decision_id}: ${record.chosen} (${record.reason})\n`,
    );
    return 0;
  } finally {
    await container.dispose();
  }
};

export const decisionsCommand: CommandHandler = async (args) => {
  const { values } = parseOptions(args, { db: { type: 'string' }, json: { type: 'boolean' } }, DECIDE_USAGE);
  const container = await openCliServices(values.db, shellAccess());
  try {
    const decisions = await container.services.experiments.decisions();
    if (values.json) process.stdout.write(`${JSON.stringify(decisions, null, 2)}\n`);
    else
      process.stdout.write(
        `${formatTable([['decided', 'by', 'experiment', 'chosen', 'reason'], ...decisions.map((decision) => [decision.decided_at.slice(0, 19), decision.decided_by, decision.experiment_id.slice(0, 8), decision.chosen, decision.reason])])}\n`,
      );
    return 0;
  } finally {
    await container.dispose();
  }
};
