import type { ExperimentResult } from '../../../../shared/contract/experiments';
import { escape, fmt } from '../../report-format';
import type { KindReport } from '../kind-report';

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

export const SWEEP_REPORT: KindReport = {
  title: 'Server-setting sweep',
  section: (result) =>
    `<h2>Windows and verdicts</h2><p>${escape((result.kind === 'sweep' ? result.protocol.windows : null) ?? '')}. Goodput is the mean over windows of each window's own goodput.</p>`,
  charts: (result) => [paretoChart(result.conditions)],
};
