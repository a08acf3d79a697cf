import type { ExperimentResult } from '../../../../shared/contract/experiments';
import { escape, fmt } from '../../report-format';
import type { KindReport } from '../kind-report';
import { tradeOffAxes } from './trade-off';

/** Throughput against tail latency (trade-off.ts), one dot per condition, the Pareto set filled. */
function paretoChart(conditions: ExperimentResult['conditions']): string {
  const axes = tradeOffAxes(conditions);
  const points = conditions.flatMap((condition) => {
    const [latency, throughput] = [axes.latencyOf(condition), axes.throughputOf(condition)];
    return latency === null || throughput === null ? [] : [{ condition, latency, throughput }];
  });
  if (points.length === 0) return '';
  const maxX = Math.max(...points.map((point) => point.latency)) * 1.1;
  const maxY = Math.max(...points.map((point) => point.throughput)) * 1.1;
  const x = (value: number) => 60 + (value / maxX) * 520;
  const y = (value: number) => 330 - (value / maxY) * 300;
  const dots = points.map(
    ({ condition, latency, throughput }) =>
      `<circle cx="${x(latency).toFixed(1)}" cy="${y(throughput).toFixed(1)}" r="5" fill="${condition.pareto ? '#0969da' : 'none'}" stroke="#0969da"/><text x="${(x(latency) + 8).toFixed(1)}" y="${(y(throughput) + 4).toFixed(1)}" font-size="11">${escape(condition.name)}</text>`,
  );
  const plotted = new Set(points.map(({ condition }) => condition));
  const omitted = conditions.filter((condition) => !plotted.has(condition)).map((condition) => condition.name);
  const note = omitted.length
    ? `<p>Not plotted (${escape(axes.latency)}: n too small, or no throughput): ${omitted.map(escape).join(', ')}.</p>`
    : '';
  const title = `${axes.throughput.charAt(0).toUpperCase()}${axes.throughput.slice(1)} against ${axes.latency}`;
  return (
    note +
    `<svg xmlns="http://www.w3.org/2000/svg" width="680" height="370" role="img" aria-label="${escape(title)}"><text x="0" y="14" font-size="13" font-weight="bold">${escape(title)} (filled: Pareto set)</text><line x1="60" y1="330" x2="590" y2="330" stroke="#888"/><line x1="60" y1="30" x2="60" y2="330" stroke="#888"/><text x="300" y="360" font-size="11">${escape(axes.latency)} (ms, up to ${fmt(maxX, 0)})</text><text x="0" y="30" font-size="11">${fmt(maxY, 0)} ${escape(axes.throughputUnit)}</text>${dots.join('')}</svg>`
  );
}

export const SWEEP_REPORT: KindReport = {
  title: 'Server-setting sweep',
  section: (result) =>
    `<h2>Windows and verdicts</h2><p>${escape((result.kind === 'sweep' ? result.protocol.windows : null) ?? '')}. Goodput is the mean over windows of each window's own goodput.</p>`,
  charts: (result) => [paretoChart(result.conditions)],
};
