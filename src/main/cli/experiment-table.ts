import type { ExperimentResult } from '../../shared/contract/experiments';
import { cooldownLine } from '../../shared/cooldown-line';
import { efficiencyCells, efficiencyNotes } from '../../shared/energy-bandwidth-lines';
import { offloadWarnings } from '../../shared/gpu-offload';
import type { ConditionResult, ExperimentKind } from '../../shared/contract/experiments';
import { agreementCell, kldCell, qualityLines } from './quant-quality-lines';
import { KVCACHE_COLUMNS, kvCacheGroupLines } from './kinds/kvcache';
import { formatMs, formatNumber, formatPercentile, formatShare, formatTable } from './format';
import { verdictTable } from './verdict-table';

/** An experiment's conditions, quality lines, evidence, verdicts and recommendation, as the terminal shows them. */
export function experimentTable(result: ExperimentResult): string {
  const cooldown = result.cooldown_waits ? `\n\n${cooldownLine(result.cooldown_waits)}` : '';
  const offload = offloadWarnings(result.conditions)
    .map((line) => `\n${line}`)
    .join('');
  return `${experimentBody(result)}${efficiencyLines(result)}${offload}${cooldown}`;
}

/** Each condition's energy per output token and decode bandwidth, means over its windows. */
function efficiencyLines(result: ExperimentResult): string {
  const measured = result.kind === 'capacity' ? [] : result.conditions.filter((condition) => condition.efficiency);
  if (measured.length === 0) return '';
  const lines = measured.map((condition) => {
    const cells = efficiencyCells(condition.efficiency);
    return `  ${condition.name}: energy per output token ${cells.energy}; decode bandwidth ${cells.bandwidth}`;
  });
  const notes = efficiencyNotes(measured).map((note) => `  ${note}`);
  return `\n\nenergy and decode bandwidth (means over windows, the energy's 95 % interval in brackets):\n${[...lines, ...notes].join('\n')}`;
}

/** The quality columns a kind adds to the condition table, by kind. */
const QUALITY_COLUMNS: Partial<Record<ExperimentKind, { header: string[]; cells: (condition: ConditionResult) => string[] }>> = {
  quant: {
    header: ['size', 'load', 'token agreement', 'KLD', 'same top'],
    cells: (condition) => [
      `${((condition.file_bytes ?? 0) / 2 ** 20).toFixed(1)} MiB`,
      formatMs(condition.load_ms),
      agreementCell(condition),
      kldCell(condition.kld_mean),
      formatShare(condition.same_top_p),
    ],
  },
  kvcache: KVCACHE_COLUMNS,
};

function experimentBody(result: ExperimentResult): string {
  if (result.kind === 'capacity' && result.capacity) return capacityTable(result.capacity, result.recommendation.reason);
  if (result.kind === 'spec' && result.greedy_equivalence) return specTable(result, result.greedy_equivalence);
  if (result.kind === 'sweep') {
    const sweepRows = [
      ['condition', 'windows', 'requests', 'TTFT p50', 'TTFT p95', 'TPOT p50', 'output tok/s', 'goodput', 'good ≥ target', 'Pareto'],
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
      ...(QUALITY_COLUMNS[result.kind]?.header ?? []),
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
      ...(QUALITY_COLUMNS[result.kind]?.cells(condition) ?? []),
      condition.contaminated ? `YES: ${condition.contamination_reason}` : 'no',
    ]),
  ];
  const evidence = result.conditions
    .filter((condition) => condition.cache_evidence || condition.cold_starts)
    .map(
      (condition) =>
        `  ${condition.name}: ${condition.cache_evidence?.summary ?? ''}${condition.cold_starts ? `; ${condition.cold_starts.starts.length} fresh starts, spawn → ready p50 ${formatMs(condition.cold_starts.spawn_to_ready_ms.p50)}, first-request TTFT p50 ${formatMs(condition.cold_starts.ttft_ms.p50)}` : ''}`,
    );
  const quality =
    result.kind === 'quant' || result.kind === 'kvcache' ? `\n\n${[...kvCacheGroupLines(result), ...qualityLines(result)].join('\n')}` : '';
  const cache =
    evidence.length > 0 ? `\n\ncache evidence (per request, from the server's cached-token counts):\n${evidence.join('\n')}` : '';
  return `${formatTable(rows)}${quality}${cache}\n\nverdicts (each condition against the baseline, A):\n${verdictTable(result.verdicts)}\n\nrecommendation: ${result.recommendation.choice ?? '—'}: ${result.recommendation.reason}\n${result.recommendation.excluded.map((item) => `  excluded ${item.name}: ${item.reason}`).join('\n')}`;
}

/** A capacity search: every load it measured, in load order, then the answer and the rule it was decided by. */
const perSecond = (value: number | null) => (value === null ? '—' : `${formatNumber(value, 2)} req/s`);

export function capacityTable(capacity: NonNullable<ExperimentResult['capacity']>, reason: string): string {
  const metrics = Object.keys(capacity.slo).filter((key) => capacity.slo[key as keyof typeof capacity.slo] !== undefined);
  const p = `p${capacity.percentile}`;
  const rows = [
    [
      capacity.by === 'rate' ? 'rate (req/s)' : capacity.by === 'users' ? 'users' : 'concurrency',
      'step',
      'verdict',
      'requests',
      ...metrics.map(
        (metric) => `${metric.replace('_ms', '').toUpperCase()} ${p} (≤ ${capacity.slo[metric as keyof typeof capacity.slo]} ms)`,
      ),
      'over a limit',
      'failed',
      'good',
      'goodput',
      'throughput',
      ...(capacity.by === 'rate' ? ['sent'] : []),
    ],
    ...[...capacity.steps]
      .sort((a, b) => a.load - b.load)
      .map((step) => [
        String(step.load),
        `${step.phase} #${capacity.steps.indexOf(step) + 1}`,
        step.decision === 'invalid' ? `invalid (${step.invalid_reason ?? 'client behind'})` : step.decision,
        `${step.requests}${step.looks > 1 ? ` (${step.looks} looks)` : ''}`,
        // A null percentile with failures fell on a failed request: above every limit.
        ...metrics.map((metric) =>
          step.percentile_ms[metric] == null && step.failed > 0 ? 'a failure' : formatMs(step.percentile_ms[metric] ?? null),
        ),
        metrics.map((metric) => step.violations[metric] ?? 0).join(' / '),
        String(step.failed),
        step.good_fraction === null ? '—' : `${formatNumber(step.good_fraction * 100, 0)} %`,
        perSecond(step.goodput_requests_per_s),
        perSecond(step.throughput_requests_per_s),
        ...(capacity.by === 'rate' ? [perSecond(step.achieved_load)] : []),
      ]),
  ];
  const answer =
    capacity.capacity === null
      ? 'capacity: none shown'
      : `capacity: ${capacity.capacity} ${capacity.unit} at ${p}` +
        (capacity.interval?.high
          ? ` (the limit lies in [${capacity.interval.low}, ${capacity.interval.high}) ${capacity.unit}, ${Math.round((1 - capacity.alpha) * 100)} % confidence)`
          : ' (no load was shown to miss)');
  const knee = `knee: ${capacity.knee === null ? 'none seen' : `${capacity.knee} ${capacity.unit}`} (${capacity.knee_rule})`;
  return `${formatTable(rows)}\n\n${answer}\n${knee}\n${reason}\nrule: ${capacity.rule}`;
}

/** Speculative decoding: speed, acceptance and greedy output per setting, then verdicts against spec off. */
function specTable(result: ExperimentResult, equivalence: NonNullable<ExperimentResult['greedy_equivalence']>): string {
  const rows = [
    [
      'condition',
      'windows',
      'requests',
      'TTFT p50',
      'TPOT p50',
      'output tok/s',
      'accepted drafts',
      'per request p50',
      'min',
      'greedy output',
      'contaminated',
    ],
    ...result.conditions.map((condition) => {
      const check = equivalence.settings.find((setting) => setting.name === condition.name);
      const speculative = condition.speculative;
      return [
        condition.name,
        String(condition.windows_run ?? condition.run_ids.length),
        String(condition.requests.attempted),
        formatMs(condition.metrics.ttft_ms.p50),
        formatMs(condition.metrics.tpot_ms.p50),
        formatNumber(condition.throughput.output_tokens_per_s),
        speculative
          ? `${speculative.accepted_tokens}/${speculative.drafted_tokens} (${formatShare(speculative.acceptance_rate)})`
          : '— (no draft)',
        formatShare(speculative?.acceptance_rate_per_request.p50),
        formatShare(speculative?.acceptance_rate_per_request.min),
        check ? (check.equivalent ? 'identical' : `DIFFERS on ${check.beyond_floor.length}`) : 'reference',
        condition.contaminated ? `YES: ${condition.contamination_reason}` : 'no',
      ];
    }),
  ];
  const floor = `greedy output over ${equivalence.items} items: spec off agreed with itself on ${equivalence.items - equivalence.floor_mismatches.length}${equivalence.floor_mismatches.length ? ` (not on ${equivalence.floor_mismatches.join(', ')})` : ''}`;
  const differing = equivalence.settings
    .filter((setting) => !setting.equivalent)
    .map((setting) => `  ${setting.name} differs from spec off on: ${setting.beyond_floor.join(', ')}`);
  return `${formatTable(rows)}

${floor}
${
  differing.length
    ? `${differing.join('\n')}
`
    : ''
}rule: ${equivalence.rule}

verdicts (each draft setting against spec off):
${verdictTable(result.verdicts)}

recommendation: ${result.recommendation.choice ?? '—'}: ${result.recommendation.reason}
${result.recommendation.excluded.map((item) => `  not chosen ${item.name}: ${item.reason}`).join('\n')}`;
}
