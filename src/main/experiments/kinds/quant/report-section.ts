import type { ExperimentResult } from '../../../../shared/contract/experiments';
import { bubbleDiameter, quantTradeoffPoints } from '../../../../shared/quant-tradeoff-points';
import { barChart, escape, fmt } from '../../report-format';
import type { KindReport } from '../kind-report';

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

/** The quantization table of an experiment report: file, load, memory and quality against the baseline, and the trade-off chart. */
function quantSection(result: ExperimentResult): string {
  const conditions = result.conditions;
  return `<h2>Quantization</h2><table><tr><th>Condition</th><th>File</th><th>Load (spawn → ready)</th><th>VRAM peak</th><th>Agreement with ${escape(conditions[0]?.name)}</th><th>First divergence (chars)</th><th>KLD mean</th><th>Same top token</th></tr>${conditions.map((condition) => `<tr><th>${escape(condition.name)}</th><td>${fmt((condition.file_bytes ?? 0) / 2 ** 20, 1)} MiB</td><td>${fmt(condition.load_ms, 1)} ms</td><td>${condition.vram?.peak_mib === null || condition.vram?.peak_mib === undefined ? '— (no GPU telemetry)' : `${fmt(condition.vram.peak_mib, 0)} MiB`}</td><td>${condition.agreement_with_baseline === null || condition.agreement_with_baseline === undefined ? '—' : `${(condition.agreement_with_baseline * 100).toFixed(1)} %`}</td><td>${fmt(condition.first_divergence_chars_mean, 1)}</td><td>${fmt(condition.kld_mean, 6)}</td><td>${condition.same_top_p === null || condition.same_top_p === undefined ? '—' : `${(condition.same_top_p * 100).toFixed(1)} %`}</td></tr>`).join('')}</table>${quantTradeoffSvg(result)}`;
}

export const QUANT_REPORT: KindReport = {
  title: 'Quantization comparison',
  section: quantSection,
  charts: (result) => [
    barChart(
      'File size',
      'MiB',
      result.conditions.map((condition) => ({ label: condition.name, value: (condition.file_bytes ?? 0) / 2 ** 20 })),
    ),
  ],
};
