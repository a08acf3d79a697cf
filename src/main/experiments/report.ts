import type { ConditionResult, ExperimentResult } from '../../shared/contract/experiments';
import {
  conditionColumns,
  headerLabel,
  metricDistribution,
  metricFigure,
  withheldForN,
  type MetricColumn,
} from '../../shared/metric-columns';
import type { KindReport } from './kinds/kind-report';
import { barChart, escape, fmt } from './report-format';
import { verdictUnit } from '../../shared/verdict-units';
import { cooldownLine } from '../../shared/cooldown-line';
import { stoppingLine } from '../../shared/experiment-design';
import { decodesTokens, efficiencyCells, efficiencyNotes } from '../../shared/energy-bandwidth-lines';
import { offloadWarnings } from '../../shared/gpu-offload';
import { bunchedDeliveryLines } from '../../shared/bunched-delivery-lines';

/**
 * The conditions table's metric columns and the bar charts, from the metric table (`shows.report`,
 * `shows.reportChart`, or `shows.embeddingConditions` for an embeddings experiment).
 */
const metricHeaders = (columns: readonly MetricColumn[]) =>
  columns
    .map(
      ({ metric, statistic, definition }) =>
        `<th>${escape(headerLabel(metric, statistic))}${definition.perRequest ? ` (${escape(definition.unit)})` : ''}</th>`,
    )
    .join('');

function metricCells(columns: readonly MetricColumn[], condition: ConditionResult): string {
  return columns
    .map(({ metric, statistic, definition }) => {
      if (!definition.perRequest) return `<td>${fmt(metricFigure(condition, metric, statistic), definition.digits)}</td>`;
      const distribution = metricDistribution(condition, metric);
      return `<td>${distribution && withheldForN(distribution, statistic) ? 'n too small' : fmt(metricFigure(condition, metric, statistic))}</td>`;
    })
    .join('');
}

const metricCharts = (conditions: readonly ConditionResult[]) =>
  conditionColumns('reportChart', conditions).map(({ metric, statistic, definition }) =>
    barChart(
      headerLabel(metric, statistic),
      definition.unit,
      conditions.map((condition) => ({ label: condition.name, value: metricFigure(condition, metric, statistic) })),
    ),
  );

/** One self-contained HTML file: protocol, tables, charts and verdicts of an experiment. */
export function renderExperimentReport(result: ExperimentResult, kind: KindReport): string {
  const conditions = result.conditions;
  const columns = conditionColumns('report', conditions);
  // Energy per output token and decode bandwidth: none for conditions that decoded nothing (embeddings).
  const decoded = conditions.some(decodesTokens);
  const metricRows = conditions
    .map(
      (condition) =>
        `<tr><th>${escape(condition.name)}</th><td>${condition.requests.attempted}</td><td>${condition.requests.failed}</td>${metricCells(columns, condition)}<td>${condition.accepted_rate === null ? '—' : `${(condition.accepted_rate * 100).toFixed(1)} %`}</td><td>${condition.evidence.cached_prompt_tokens}</td>${decoded ? `<td>${escape(efficiencyCells(condition.efficiency).energy)}</td><td>${escape(efficiencyCells(condition.efficiency).bandwidth)}</td>` : ''}<td>${condition.contaminated ? `<b class="bad">yes</b>: ${escape(condition.contamination_reason)}` : 'no'}</td></tr>`,
    )
    .join('');
  const notes = efficiencyNotes(conditions);
  const efficiencyNotesHtml = notes.length ? `<p><small>${notes.map(escape).join('<br>')}</small></p>` : '';
  const offload = offloadWarnings(conditions);
  const offloadHtml = offload.length ? `<p class="bad" data-offload-warnings>${offload.map(escape).join('<br>')}</p>` : '';
  const bunched = bunchedDeliveryLines(conditions);
  const bunchedHtml = bunched.length ? `<p class="bad" data-bunched-delivery>${bunched.map(escape).join('<br>')}</p>` : '';
  const relative = (value: number) => `${value >= 0 ? '+' : '−'}${Math.abs(value * 100).toFixed(1)} %`;
  const verdictRows = result.verdicts
    .map(
      (row) =>
        `<tr><td>${escape(row.metric)}</td><td>${escape(row.a)} → ${escape(row.b)}</td><td>${fmt(row.a_value)} → ${fmt(row.b_value)} ${verdictUnit(row.metric)}</td><td>${row.relative_difference == null ? '—' : relative(row.relative_difference)}</td><td>${row.relative_ci && row.confidence != null ? `[${relative(row.relative_ci[0])}, ${relative(row.relative_ci[1])}] at ${(row.confidence * 100).toFixed(2)} %` : '—'}</td><td>${row.windows ? `${row.windows[0]} vs ${row.windows[1]}` : '—'}</td><td class="${row.verdict === 'faster' ? 'good' : row.verdict === 'slower' ? 'bad' : ''}">${escape(row.verdict === 'equivalent' ? `equivalent within ±${((row.equivalence_margin ?? 0) * 100).toFixed(0)} %` : row.verdict)}${row.note && row.verdict === 'insufficient data' ? `<br><small>${escape(row.note)}</small>` : ''}</td></tr>`,
    )
    .join('');
  const charts = [...metricCharts(conditions), ...(kind.charts?.(result) ?? [])];
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>Infer Lab experiment ${escape(result.experiment_id.slice(0, 8))} (${escape(result.kind)})</title>
<style>body{font-family:system-ui,sans-serif;max-width:1100px;margin:24px auto;padding:0 16px;color:#1f2328}table{border-collapse:collapse;width:100%;margin:8px 0 20px}th,td{border-bottom:1px solid #d0d7de;padding:4px 8px;text-align:left;font-size:13px}.bad{color:#cf222e}.good{color:#1a7f37}pre{background:#f6f8fa;padding:8px;overflow:auto;font-size:12px}.charts{display:flex;flex-wrap:wrap;gap:16px}</style></head>
<body>
<h1>${kind.title}</h1>
<p>Experiment <code>${escape(result.experiment_id)}</code>, status ${escape(result.status)}.</p>
<h2>Recommendation</h2><p><b>${escape(result.recommendation.choice ?? 'no choice')}</b>: ${escape(result.recommendation.reason)}</p>
${result.stopping ? `<p>${escape(stoppingLine(result.stopping))}</p>` : ''}
${result.cooldown_waits ? `<p>${escape(cooldownLine(result.cooldown_waits))}</p>` : ''}
${result.recommendation.excluded.length ? `<ul>${result.recommendation.excluded.map((item) => `<li>${escape(item.name)} excluded: ${escape(item.reason)}</li>`).join('')}</ul>` : ''}
${(result.recommendation.gates ?? []).length ? `<h3>Gates${result.recommendation.objective ? ` <small>(eligible ranked by ${escape(result.recommendation.objective)})</small>` : ''}</h3><table><tr><th>Gate</th><th>Threshold</th><th>Condition</th><th>Result</th></tr>${(result.recommendation.gates ?? []).flatMap((gate) => gate.conditions.map((cell, index) => `<tr>${index === 0 ? `<td rowspan="${gate.conditions.length}">${escape(gate.name)}</td><td rowspan="${gate.conditions.length}">${escape(gate.threshold)}</td>` : ''}<td>${escape(cell.name)}</td><td class="${cell.status === 'pass' ? 'good' : cell.status === 'fail' ? 'bad' : ''}">${escape(cell.status)}: ${escape(cell.detail)}</td></tr>`)).join('')}</table>` : ''}
<h2>Conditions</h2>
<table><tr><th>Condition</th><th>Requests</th><th>Failed</th>${metricHeaders(columns)}<th>Accepted</th><th>Cached prompt tokens</th>${decoded ? '<th>Energy / output token</th><th>Decode bandwidth</th>' : ''}<th>Contaminated</th></tr>${metricRows}</table>
${efficiencyNotesHtml}
${offloadHtml}${bunchedHtml}
${kind.section?.(result) ?? ''}
${
  kind.ownVerdicts
    ? ''
    : `<h2>Verdicts</h2><p>Differences against the first condition with 95 % intervals from a bootstrap over windows and the requests within them (run-to-run drift widens them); an interval that includes zero is “no significant difference”.</p>
<table><tr><th>Metric</th><th>Conditions</th><th>Values</th><th>Change</th><th>Interval</th><th>Windows</th><th>Verdict</th></tr>${verdictRows}</table>
<p>Verdicts are decided together: t tests over windows (the unit of replication), Holm-corrected to 95 % family-wise; each interval is at the level its decision used. Values pool every request; change and interval compare the windows (B/A of the geometric means of each window’s statistic), so they can differ from the ratio of the pooled values, by much where one window stands apart. “Equivalent” means the interval lies within the margin; “no significant difference” means neither a difference nor equivalence was shown.</p>`
}
<h2>Charts</h2><div class="charts">${charts.join('')}</div>
<h2>Protocol</h2><pre>${escape(JSON.stringify(result.protocol, null, 2))}</pre>
<p><small>Run ids per condition: ${conditions.map((condition) => `${escape(condition.name)}: ${condition.run_ids.map((id) => escape(id.slice(0, 8))).join(', ')}`).join('; ')}</small></p>
</body></html>
`;
}
