import { recommendationText } from './recommendation-text';
import type { ExperimentResult } from '../../shared/contract/experiments';
import { cooldownLine } from '../../shared/cooldown-line';
import { stoppingLine } from '../../shared/experiment-design';
import { decodesTokens, efficiencyCells, efficiencyNotes } from '../../shared/energy-bandwidth-lines';
import { offloadWarnings } from '../../shared/gpu-offload';
import { bunchedDeliveryLines } from '../../shared/bunched-delivery-lines';
import { CLI_KINDS } from './kinds/registry';
import { conditionMetricColumns } from './condition-columns';
import { formatMs, formatTable } from './format';
import { verdictTable } from './verdict-table';

/** An experiment's conditions, quality lines, evidence, verdicts and recommendation, as the terminal shows them. */
export function experimentTable(result: ExperimentResult): string {
  const cooldown = result.cooldown_waits ? `\n\n${cooldownLine(result.cooldown_waits)}` : '';
  const stopping = result.stopping ? `\n\n${stoppingLine(result.stopping)}` : '';
  const warnings = [...offloadWarnings(result.conditions), ...bunchedDeliveryLines(result.conditions)].map((line) => `\n${line}`).join('');
  return `${experimentBody(result)}${efficiencyLines(result)}${warnings}${stopping}${cooldown}`;
}

/** What the verdicts compare: every condition against the baseline, and any further pair (an adapter's two servings). */
function verdictsHeading(result: ExperimentResult): string {
  const baseline = result.conditions[0]?.name;
  const further = result.verdicts.some((row) => row.a !== baseline);
  return `each condition against the baseline, A${further ? '; then each pair asked for, A against B' : ''}`;
}

/** Each condition's energy per output token and decode bandwidth, means over its windows, where it decoded tokens. */
function efficiencyLines(result: ExperimentResult): string {
  const measured = CLI_KINDS[result.kind].withoutEfficiency
    ? []
    : result.conditions.filter((condition) => condition.efficiency && decodesTokens(condition));
  if (measured.length === 0) return '';
  const lines = measured.map((condition) => {
    const cells = efficiencyCells(condition.efficiency);
    return `  ${condition.name}: energy per output token ${cells.energy}; decode bandwidth ${cells.bandwidth}`;
  });
  const notes = efficiencyNotes(measured).map((note) => `  ${note}`);
  return `\n\nenergy and decode bandwidth (means over windows, the energy's 95 % interval in brackets):\n${[...lines, ...notes].join('\n')}`;
}

function experimentBody(result: ExperimentResult): string {
  const kind = CLI_KINDS[result.kind];
  const own = kind.table?.(result);
  if (own) return own;
  const metricColumns = conditionMetricColumns(result.conditions);
  const rows = [
    ['condition', 'requests', ...metricColumns.headers, 'cached tok', ...(kind.columns?.header ?? []), 'contaminated'],
    ...result.conditions.map((condition) => [
      condition.name,
      String(condition.requests.attempted),
      ...metricColumns.cells(condition),
      String(condition.evidence.cached_prompt_tokens),
      ...(kind.columns?.cells(condition) ?? []),
      condition.contaminated ? `YES: ${condition.contamination_reason}` : 'no',
    ]),
  ];
  const evidence = result.conditions
    .filter((condition) => condition.cache_evidence || condition.cold_starts)
    .map(
      (condition) =>
        `  ${condition.name}: ${condition.cache_evidence?.summary ?? ''}${condition.cold_starts ? `; ${condition.cold_starts.starts.length} fresh starts, spawn → ready p50 ${formatMs(condition.cold_starts.spawn_to_ready_ms.p50)}, first-request TTFT p50 ${formatMs(condition.cold_starts.ttft_ms.p50)}` : ''}`,
    );
  const lines = kind.lines?.(result) ?? [];
  const quality = lines.length > 0 ? `\n\n${lines.join('\n')}` : '';
  const cache =
    evidence.length > 0 ? `\n\ncache evidence (per request, from the server's cached-token counts):\n${evidence.join('\n')}` : '';
  return `${formatTable(rows)}${quality}${cache}\n\nverdicts (${verdictsHeading(result)}):\n${verdictTable(result.verdicts)}\n\n${recommendationText(result.recommendation, 'excluded')}`;
}
