import type { ExperimentResult } from '../../shared/contract/experiments';
import { bubbleDiameter, quantTradeoffPoints } from '../../shared/quant-tradeoff-points';
import { capacitySection } from './capacity-report';
import { kvCacheReportSection } from './kinds/kvcache/report-section';
import { escape, fmt, share } from './report-format';
import { verdictUnit } from '../../shared/verdict-units';
import { cooldownLine } from '../../shared/cooldown-line';
import { efficiencyCells, efficiencyNotes } from '../../shared/energy-bandwidth-lines';
import { offloadWarnings } from '../../shared/gpu-offload';

/** A horizontal bar chart as inline SVG: no scripts, no network. */
function barChart(title: string, unit: string, bars: { label: string; value: number | null }[]): string {
  const width = 640;
  const rowHeight = 26;
  const max = Math.max(1e-9, ...bars.map((bar) => bar.value ?? 0));
  const rows = bars.map((bar, index) => {
    const y = 30 + index * rowHeight;
    const length = bar.value === null ? 0 : (bar.value / max) * (width - 260);
    return `<text x="0" y="${y + 16}" font-size="12">${escape(bar.label)}</text><rect x="150" y="${y + 4}" width="${length.toFixed(1)}" height="16" fill="#0969da"/><text x="${(156 + length).toFixed(1)}" y="${y + 16}" font-size="12">${bar.value === null ? '—' : `${fmt(bar.value)} ${escape(unit)}`}</text>`;
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${40 + bars.length * rowHeight}" role="img" aria-label="${escape(title)}"><text x="0" y="16" font-size="13" font-weight="bold">${escape(title)}</text>${rows.join('')}</svg>`;
}

/** Throughput against p95 TTFT, one dot per condition, the Pareto set filled. */
function paretoChart(conditions: ExperimentResult['conditions']): string {
  const points = conditions.filter(
    (condition) => condition.throughput.output_tokens_per_s !== null && condition.metrics.ttft_ms.p95 !== null,
  );
  if (points.length === 0) return '';
  const maxX = Math.max(...points.map((point) => point.metrics.ttft_ms.p95!)) * 1.1;
  const maxY = Math.max(...points.map((point) => point.throughput.output_tokens_per_s!)) * 1.1;
  const x = (value: number) => 60 + (value / maxX) * 520;
  const y = (value: number) => 330 - (value / maxY) * 300;
  const dots = points.map(
    (point) =>
      `<circle cx="${x(point.metrics.ttft_ms.p95!).toFixed(1)}" cy="${y(point.throughput.output_tokens_per_s!).toFixed(1)}" r="5" fill="${point.pareto ? '#0969da' : 'none'}" stroke="#0969da"/><text x="${(x(point.metrics.ttft_ms.p95!) + 8).toFixed(1)}" y="${(y(point.throughput.output_tokens_per_s!) + 4).toFixed(1)}" font-size="11">${escape(point.name)}</text>`,
  );
  const omitted = conditions.filter((condition) => condition.metrics.ttft_ms.p95 === null).map((condition) => condition.name);
  const note = omitted.length ? `<p>Not plotted (TTFT p95: n too small, or no throughput): ${omitted.map(escape).join(', ')}.</p>` : '';
  return (
    note +
    `<svg xmlns="http://www.w3.org/2000/svg" width="680" height="370" role="img" aria-label="throughput against p95 TTFT"><text x="0" y="14" font-size="13" font-weight="bold">Output tokens/s against TTFT p95 (filled: Pareto set)</text><line x1="60" y1="330" x2="590" y2="330" stroke="#888"/><line x1="60" y1="30" x2="60" y2="330" stroke="#888"/><text x="300" y="360" font-size="11">TTFT p95 (ms, up to ${fmt(maxX, 0)})</text><text x="0" y="30" font-size="11">${fmt(maxY, 0)} tok/s</text>${dots.join('')}</svg>`
  );
}

/** Tick values span microunits (KLD) to thousands (ms): short, and exponential where fixed digits would read as 0. */
const tick = (value: number) =>
  value === 0 ? '0' : Math.abs(value) < 1e-3 || Math.abs(value) >= 1e5 ? value.toExponential(1) : String(Number(value.toPrecision(3)));

/** A value axis that leaves room for the largest bubble at both ends; it starts at 0 rather than below when every value is ≥ 0. */
function axisRange(values: number[]): [number, number] {
  const low = Math.min(...values);
  const high = Math.max(...values);
  const pad = (high - low || Math.abs(high) || 1) * 0.1;
  return [low >= 0 ? Math.max(0, low - pad) : low - pad, high + pad];
}

/**
 * The app's quantization trade-off chart as inline SVG, from the same data: TPOT p50 against
 * quality loss, bubble area by memory, the recommendation ringed in green and the KLD gate dashed.
 * Empty when no condition has both figures.
 */
export function quantTradeoffSvg(result: ExperimentResult): string {
  const chart = quantTradeoffPoints(result);
  if (chart === null) return '';
  // Room above the plot for the axis name and the labels of the highest bubbles, as in the app.
  const [left, right, top, bottom] = [80, 640, 64, 344];
  const [minX, maxX] = axisRange(chart.points.map((point) => point.x));
  // The gate is part of the range so the line is always drawn, showing how far inside it each condition is.
  const [minY, maxY] = axisRange([...chart.points.map((point) => point.y), ...(chart.threshold === null ? [] : [chart.threshold])]);
  const x = (value: number) => left + ((value - minX) / (maxX - minX)) * (right - left);
  const y = (value: number) => bottom - ((value - minY) / (maxY - minY)) * (bottom - top);
  const px = (value: number) => value.toFixed(1);
  // The recommendation last, so no other bubble covers its ring.
  const ordered = [...chart.points].sort((a, b) => Number(a.recommended) - Number(b.recommended));
  const bubbles = ordered.map((point) => {
    const radius = bubbleDiameter(point.memory, chart.largestMemory) / 2;
    const ring = point.recommended ? 'stroke="#1a7f37" stroke-width="3"' : 'stroke="#0969da" stroke-width="1"';
    const memory = point.memory === null ? 'unknown' : `${fmt(point.memory, 0)} MiB`;
    const hover = `${point.name}: TPOT p50 ${tick(point.x)} ms, ${chart.yName} ${tick(point.y)}, ${chart.memoryLabel} ${memory}`;
    const label = point.recommended ? `${point.name} (recommended)` : point.name;
    return `<circle cx="${px(x(point.x))}" cy="${px(y(point.y))}" r="${px(radius)}" fill="#0969da" fill-opacity="0.35" ${ring}><title>${escape(hover)}</title></circle><text x="${px(x(point.x))}" y="${px(y(point.y) - radius - 4)}" font-size="11" text-anchor="middle"${point.recommended ? ' font-weight="bold" fill="#1a7f37"' : ''}>${escape(label)}</text>`;
  });
  const gate =
    chart.threshold === null
      ? ''
      : `<line class="gate" x1="${left}" y1="${px(y(chart.threshold))}" x2="${right}" y2="${px(y(chart.threshold))}" stroke="#cf222e" stroke-dasharray="6 4"/><text x="${right}" y="${px(y(chart.threshold) - 4)}" font-size="11" text-anchor="end" fill="#cf222e">${escape(`gate: KLD ≤ ${chart.threshold}`)}</text>`;
  const title = `Speed against quality (bubble: ${chart.memoryLabel})`;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="680" height="400" role="img" aria-label="${escape(title)}"><text x="0" y="16" font-size="13" font-weight="bold">${escape(title)}</text><text x="${left}" y="${top - 24}" font-size="11" text-anchor="middle">${escape(chart.yName)}</text><line x1="${left}" y1="${bottom}" x2="${right}" y2="${bottom}" stroke="#888"/><line x1="${left}" y1="${top}" x2="${left}" y2="${bottom}" stroke="#888"/><text x="${left - 6}" y="${top + 4}" font-size="11" text-anchor="end">${escape(tick(maxY))}</text><text x="${left - 6}" y="${bottom + 4}" font-size="11" text-anchor="end">${escape(tick(minY))}</text><text x="${left}" y="${bottom + 16}" font-size="11" text-anchor="middle">${escape(tick(minX))}</text><text x="${right}" y="${bottom + 16}" font-size="11" text-anchor="middle">${escape(tick(maxX))}</text><text x="${(left + right) / 2}" y="${bottom + 40}" font-size="11" text-anchor="middle">${escape(chart.xName)}</text>${gate}${bubbles.join('')}</svg>`;
}

const REPORT_TITLES: Record<ExperimentResult['kind'], string> = {
  quant: 'Quantization comparison',
  sweep: 'Server-setting sweep',
  capacity: 'Capacity under an SLO',
  warmcold: 'Warm against cold',
  spec: 'Speculative decoding',
  kvcache: 'KV cache types',
};

/** Speculative decoding: acceptance per setting, and whether greedy outputs stayed the same. */
function speculativeSection(result: ExperimentResult): string {
  const equivalence = result.greedy_equivalence!;
  const rows = result.conditions
    .map((condition) => {
      const check = equivalence.settings.find((setting) => setting.name === condition.name);
      const speculative = condition.speculative;
      return `<tr><th>${escape(condition.name)}</th><td>${speculative ? `${speculative.accepted_tokens} of ${speculative.drafted_tokens} (${share(speculative.acceptance_rate)})` : '— (no draft)'}</td><td>${share(speculative?.acceptance_rate_per_request.p50)}</td><td>${share(speculative?.acceptance_rate_per_request.min)}</td><td class="${check && !check.equivalent ? 'bad' : ''}">${check ? (check.equivalent ? 'identical' : `differs on ${escape(check.beyond_floor.join(', '))}`) : 'reference'}</td><td>${check ? share(check.agreement.exact_match_rate) : share(equivalence.noise_floor.exact_match_rate)}</td></tr>`;
    })
    .join('');
  return `<h2>Speculative decoding</h2><table><tr><th>Condition</th><th>Drafted tokens accepted</th><th>Per request p50</th><th>Per request min</th><th>Greedy output</th><th>Exact match with spec off</th></tr>${rows}</table><p>${equivalence.items} items; the spec-off pass agreed with itself on ${equivalence.items - equivalence.floor_mismatches.length}${equivalence.floor_mismatches.length ? ` (differed on ${escape(equivalence.floor_mismatches.join(', '))})` : ''}. The reference row’s exact match is spec off against itself.</p><p><small>${escape(equivalence.rule)}</small></p>`;
}

/** Warm/cold: per-request cache evidence and fresh starts; sweep: how windows and verdicts were arranged. */
function evidenceSection(result: ExperimentResult): string {
  const proven = result.conditions.filter((condition) => condition.cache_evidence);
  const cold = result.conditions.find((condition) => condition.cold_starts)?.cold_starts;
  const parts: string[] = [];
  if (proven.length > 0) {
    parts.push(
      `<h2>Cache evidence</h2><p>Per measured request, from the server's own cached-token counts; a request without a count is unknown, never 0; one contradicting request contaminates its condition.</p><table><tr><th>Condition</th><th>Claim</th><th>Confirmed</th><th>Contradicted</th><th>Unknown</th><th>Evidence</th></tr>${proven
        .map((condition) => {
          const evidence = condition.cache_evidence!;
          return `<tr><th>${escape(condition.name)}</th><td>${escape(evidence.expect)}</td><td>${evidence.confirmed} of ${evidence.measured}</td><td class="${evidence.contradicted > 0 ? 'bad' : ''}">${evidence.contradicted}</td><td>${evidence.unknown}</td><td>${escape(evidence.summary)}</td></tr>`;
        })
        .join(
          '',
        )}</table><p><small>${proven.map((condition) => `${escape(condition.name)}: ${escape(condition.cache_evidence!.rule)}`).join('<br>')}</small></p>`,
    );
  }
  if (cold) {
    parts.push(
      `<h2>Fresh starts (cold-process)</h2><p>${cold.starts.length} fresh servers, each measured on the first request it answered: spawn → ready p50 ${fmt(cold.spawn_to_ready_ms.p50, 1)} ms (min ${fmt(cold.spawn_to_ready_ms.min, 1)}, max ${fmt(cold.spawn_to_ready_ms.max, 1)}); first-request TTFT p50 ${fmt(cold.ttft_ms.p50, 1)} ms (min ${fmt(cold.ttft_ms.min, 1)}, max ${fmt(cold.ttft_ms.max, 1)}).</p>`,
    );
  }
  if (result.greedy_equivalence) parts.push(speculativeSection(result));
  if (result.kind === 'sweep') {
    parts.push(
      `<h2>Windows and verdicts</h2><p>${escape((result.protocol as { windows?: string }).windows ?? '')}. Goodput is the mean over windows of each window's own goodput.</p>`,
    );
  }
  return parts.join('\n');
}

/** One self-contained HTML file: protocol, tables, charts and verdicts of an experiment. */
export function renderExperimentReport(result: ExperimentResult): string {
  const conditions = result.conditions;
  const metricRows = conditions
    .map(
      (condition) =>
        `<tr><th>${escape(condition.name)}</th><td>${condition.requests.attempted}</td><td>${condition.requests.failed}</td><td>${fmt(condition.metrics.ttft_ms.p50)}</td><td>${condition.metrics.ttft_ms.p95 === null && condition.metrics.ttft_ms.n > 0 ? 'n too small' : fmt(condition.metrics.ttft_ms.p95)}</td><td>${fmt(condition.metrics.tpot_ms.p50)}</td><td>${fmt(condition.metrics.e2e_ms.p50)}</td><td>${fmt(condition.throughput.output_tokens_per_s, 1)}</td><td>${condition.accepted_rate === null ? '—' : `${(condition.accepted_rate * 100).toFixed(1)} %`}</td><td>${condition.evidence.cached_prompt_tokens}</td><td>${escape(efficiencyCells(condition.efficiency).energy)}</td><td>${escape(efficiencyCells(condition.efficiency).bandwidth)}</td><td>${condition.contaminated ? `<b class="bad">yes</b>: ${escape(condition.contamination_reason)}` : 'no'}</td></tr>`,
    )
    .join('');
  const notes = efficiencyNotes(conditions);
  const efficiencyNotesHtml = notes.length ? `<p><small>${notes.map(escape).join('<br>')}</small></p>` : '';
  const offload = offloadWarnings(conditions);
  const offloadHtml = offload.length ? `<p class="bad" data-offload-warnings>${offload.map(escape).join('<br>')}</p>` : '';
  const quantRows =
    result.kind === 'quant'
      ? `<h2>Quantization</h2><table><tr><th>Condition</th><th>File</th><th>Load (spawn → ready)</th><th>VRAM peak</th><th>Agreement with ${escape(conditions[0]?.name)}</th><th>First divergence (chars)</th><th>KLD mean</th><th>Same top token</th></tr>${conditions.map((condition) => `<tr><th>${escape(condition.name)}</th><td>${fmt((condition.file_bytes ?? 0) / 2 ** 20, 1)} MiB</td><td>${fmt(condition.load_ms, 1)} ms</td><td>${condition.vram?.peak_mib === null || condition.vram?.peak_mib === undefined ? '— (no GPU telemetry)' : `${fmt(condition.vram.peak_mib, 0)} MiB`}</td><td>${condition.agreement_with_baseline === null || condition.agreement_with_baseline === undefined ? '—' : `${(condition.agreement_with_baseline * 100).toFixed(1)} %`}</td><td>${fmt(condition.first_divergence_chars_mean, 1)}</td><td>${fmt(condition.kld_mean, 6)}</td><td>${condition.same_top_p === null || condition.same_top_p === undefined ? '—' : `${(condition.same_top_p * 100).toFixed(1)} %`}</td></tr>`).join('')}</table>${quantTradeoffSvg(result)}`
      : '';
  const relative = (value: number) => `${value >= 0 ? '+' : '−'}${Math.abs(value * 100).toFixed(1)} %`;
  const verdictRows = result.verdicts
    .map(
      (row) =>
        `<tr><td>${escape(row.metric)}</td><td>${escape(row.a)} → ${escape(row.b)}</td><td>${fmt(row.a_value)} → ${fmt(row.b_value)} ${verdictUnit(row.metric)}</td><td>${row.relative_difference == null ? '—' : relative(row.relative_difference)}</td><td>${row.relative_ci && row.confidence != null ? `[${relative(row.relative_ci[0])}, ${relative(row.relative_ci[1])}] at ${(row.confidence * 100).toFixed(2)} %` : '—'}</td><td>${row.windows ? `${row.windows[0]} vs ${row.windows[1]}` : '—'}</td><td class="${row.verdict === 'faster' ? 'good' : row.verdict === 'slower' ? 'bad' : ''}">${escape(row.verdict === 'equivalent' ? `equivalent within ±${((row.equivalence_margin ?? 0) * 100).toFixed(0)} %` : row.verdict)}${row.note && row.verdict === 'insufficient data' ? `<br><small>${escape(row.note)}</small>` : ''}</td></tr>`,
    )
    .join('');
  const charts = [
    barChart(
      'TTFT p50',
      'ms',
      conditions.map((condition) => ({ label: condition.name, value: condition.metrics.ttft_ms.p50 })),
    ),
    barChart(
      'TPOT p50',
      'ms',
      conditions.map((condition) => ({ label: condition.name, value: condition.metrics.tpot_ms.p50 })),
    ),
    barChart(
      'Output throughput',
      'tok/s',
      conditions.map((condition) => ({ label: condition.name, value: condition.throughput.output_tokens_per_s })),
    ),
    ...(result.kind === 'quant'
      ? [
          barChart(
            'File size',
            'MiB',
            conditions.map((condition) => ({ label: condition.name, value: (condition.file_bytes ?? 0) / 2 ** 20 })),
          ),
        ]
      : []),
    ...(result.kind === 'kvcache'
      ? [
          barChart(
            'KV cache',
            'MiB',
            conditions.map((condition) => ({ label: condition.name, value: condition.kv_cache_mib ?? null })),
          ),
        ]
      : []),
    ...(result.kind === 'sweep' ? [paretoChart(conditions)] : []),
  ];
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>Infer Lab experiment ${escape(result.experiment_id.slice(0, 8))} (${escape(result.kind)})</title>
<style>body{font-family:system-ui,sans-serif;max-width:1100px;margin:24px auto;padding:0 16px;color:#1f2328}table{border-collapse:collapse;width:100%;margin:8px 0 20px}th,td{border-bottom:1px solid #d0d7de;padding:4px 8px;text-align:left;font-size:13px}.bad{color:#cf222e}.good{color:#1a7f37}pre{background:#f6f8fa;padding:8px;overflow:auto;font-size:12px}.charts{display:flex;flex-wrap:wrap;gap:16px}</style></head>
<body>
<h1>${REPORT_TITLES[result.kind]}</h1>
<p>Experiment <code>${escape(result.experiment_id)}</code>, status ${escape(result.status)}.</p>
<h2>Recommendation</h2><p><b>${escape(result.recommendation.choice ?? 'no choice')}</b>: ${escape(result.recommendation.reason)}</p>
${result.cooldown_waits ? `<p>${escape(cooldownLine(result.cooldown_waits))}</p>` : ''}
${result.recommendation.excluded.length ? `<ul>${result.recommendation.excluded.map((item) => `<li>${escape(item.name)} excluded: ${escape(item.reason)}</li>`).join('')}</ul>` : ''}
${(result.recommendation.gates ?? []).length ? `<h3>Gates${result.recommendation.objective ? ` <small>(eligible ranked by ${escape(result.recommendation.objective)})</small>` : ''}</h3><table><tr><th>Gate</th><th>Threshold</th><th>Condition</th><th>Result</th></tr>${(result.recommendation.gates ?? []).flatMap((gate) => gate.conditions.map((cell, index) => `<tr>${index === 0 ? `<td rowspan="${gate.conditions.length}">${escape(gate.name)}</td><td rowspan="${gate.conditions.length}">${escape(gate.threshold)}</td>` : ''}<td>${escape(cell.name)}</td><td class="${cell.status === 'pass' ? 'good' : cell.status === 'fail' ? 'bad' : ''}">${escape(cell.status)}: ${escape(cell.detail)}</td></tr>`)).join('')}</table>` : ''}
<h2>Conditions</h2>
<table><tr><th>Condition</th><th>Requests</th><th>Failed</th><th>TTFT p50 (ms)</th><th>TTFT p95 (ms)</th><th>TPOT p50 (ms)</th><th>E2E p50 (ms)</th><th>Output tok/s</th><th>Accepted</th><th>Cached prompt tokens</th><th>Energy / output token</th><th>Decode bandwidth</th><th>Contaminated</th></tr>${metricRows}</table>
${efficiencyNotesHtml}
${offloadHtml}
${quantRows}
${result.kind === 'kvcache' ? kvCacheReportSection(result) : ''}
${result.capacity ? capacitySection(result.capacity) : ''}
${evidenceSection(result)}
${
  result.kind === 'capacity'
    ? ''
    : `<h2>Verdicts</h2><p>Differences against the first condition with 95 % intervals from a bootstrap over windows and the requests within them (run-to-run drift widens them); an interval that includes zero is “no significant difference”.</p>
<table><tr><th>Metric</th><th>Conditions</th><th>Values</th><th>Change</th><th>Interval</th><th>Windows</th><th>Verdict</th></tr>${verdictRows}</table>
<p>Verdicts are decided together: t tests over windows (the unit of replication), Holm-corrected to 95 % family-wise; each interval is at the level its decision used. Values pool every request; change and interval compare the windows (B/A of the geometric means of each window’s statistic), so they can differ a little from the ratio of the pooled values. “Equivalent” means the interval lies within the margin; “no significant difference” means neither a difference nor equivalence was shown.</p>`
}
<h2>Charts</h2><div class="charts">${charts.join('')}</div>
<h2>Protocol</h2><pre>${escape(JSON.stringify(result.protocol, null, 2))}</pre>
<p><small>Run ids per condition: ${conditions.map((condition) => `${escape(condition.name)}: ${condition.run_ids.map((id) => escape(id.slice(0, 8))).join(', ')}`).join('; ')}</small></p>
</body></html>
`;
}
