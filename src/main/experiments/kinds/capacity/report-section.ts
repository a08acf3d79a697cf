import type { CapacityResult } from '../../../../shared/contract/experiments';
import type { KindReport } from '../kind-report';
import { escape, fmt } from '../../report-format';

interface Series {
  name: string;
  color: string;
  points: { x: number; y: number; note: string }[];
}

const tick = (value: number) => String(Number(value.toPrecision(3)));

/** Load on x, one line per series, dashed horizontal limits; as inline SVG for the self-contained report. */
function loadChartSvg(
  title: string,
  yName: string,
  xName: string,
  series: Series[],
  limits: { y: number; label: string; color: string }[],
): string {
  const points = series.flatMap((entry) => entry.points);
  if (points.length === 0) return '';
  const [left, right, top, bottom] = [70, 640, 40, 300];
  const xs = points.map((point) => point.x);
  const ys = [...points.map((point) => point.y), ...limits.map((limit) => limit.y)];
  const [minX, maxX] = [Math.min(...xs), Math.max(...xs) === Math.min(...xs) ? Math.min(...xs) + 1 : Math.max(...xs)];
  const maxY = Math.max(...ys) * 1.1 || 1;
  const x = (value: number) => left + ((value - minX) / (maxX - minX)) * (right - left);
  const y = (value: number) => bottom - (value / maxY) * (bottom - top);
  const px = (value: number) => value.toFixed(1);
  const lines = series.map((entry) => {
    const sorted = [...entry.points].sort((a, b) => a.x - b.x);
    const path = sorted.map((point, index) => `${index === 0 ? 'M' : 'L'}${px(x(point.x))},${px(y(point.y))}`).join(' ');
    const marks = sorted
      .map(
        (point) =>
          `<circle cx="${px(x(point.x))}" cy="${px(y(point.y))}" r="4" fill="${entry.color}"><title>${escape(point.note)}</title></circle>`,
      )
      .join('');
    return `<path d="${path}" fill="none" stroke="${entry.color}" stroke-width="2"/>${marks}`;
  });
  const limitLines = limits.map(
    (limit) =>
      `<line x1="${left}" y1="${px(y(limit.y))}" x2="${right}" y2="${px(y(limit.y))}" stroke="${limit.color}" stroke-dasharray="6 4"/><text x="${right}" y="${px(y(limit.y) - 4)}" font-size="11" text-anchor="end" fill="${limit.color}">${escape(limit.label)}</text>`,
  );
  const legend = series.map(
    (entry, index) =>
      `<text x="${left + index * 160}" y="${bottom + 52}" font-size="11" fill="${entry.color}">● ${escape(entry.name)}</text>`,
  );
  return `<svg xmlns="http://www.w3.org/2000/svg" width="680" height="370" role="img" aria-label="${escape(title)}"><text x="0" y="16" font-size="13" font-weight="bold">${escape(title)}</text><text x="${left}" y="${top - 8}" font-size="11" text-anchor="middle">${escape(yName)}</text><line x1="${left}" y1="${bottom}" x2="${right}" y2="${bottom}" stroke="#888"/><line x1="${left}" y1="${top}" x2="${left}" y2="${bottom}" stroke="#888"/><text x="${left - 6}" y="${top + 4}" font-size="11" text-anchor="end">${tick(maxY)}</text><text x="${left - 6}" y="${bottom + 4}" font-size="11" text-anchor="end">0</text><text x="${left}" y="${bottom + 16}" font-size="11" text-anchor="middle">${tick(minX)}</text><text x="${right}" y="${bottom + 16}" font-size="11" text-anchor="middle">${tick(maxX)}</text><text x="${(left + right) / 2}" y="${bottom + 34}" font-size="11" text-anchor="middle">${escape(xName)}</text>${limitLines.join('')}${lines.join('')}${legend.join('')}</svg>`;
}

const COLORS = ['#0969da', '#8250df', '#bf3989'];

/** The capacity section of an experiment report: the answer, every load measured, and load against latency and goodput. */
function capacitySection(capacity: CapacityResult): string {
  const metrics = Object.keys(capacity.slo).filter((key) => capacity.slo[key as keyof typeof capacity.slo] !== undefined);
  const p = `p${capacity.percentile}`;
  const steps = [...capacity.steps].sort((a, b) => a.load - b.load);
  const xName = capacity.by === 'rate' ? 'arrival rate (req/s)' : capacity.by === 'users' ? 'concurrent users' : 'concurrency';
  const latency = loadChartSvg(
    `Load against ${p} latency, SLO limits dashed`,
    'ms',
    xName,
    metrics.map((metric, index) => ({
      name: `${metric} ${p}`,
      color: COLORS[index % COLORS.length]!,
      points: steps.flatMap((step) =>
        step.percentile_ms[metric] === null || step.percentile_ms[metric] === undefined
          ? []
          : [
              {
                x: step.load,
                y: step.percentile_ms[metric]!,
                note: `${step.load}: ${metric} ${p} ${fmt(step.percentile_ms[metric])} ms, ${step.decision}`,
              },
            ],
      ),
    })),
    metrics.map((metric, index) => ({
      y: capacity.slo[metric as keyof typeof capacity.slo]!,
      label: `${metric} ≤ ${capacity.slo[metric as keyof typeof capacity.slo]} ms`,
      color: COLORS[index % COLORS.length]!,
    })),
  );
  const goodput = loadChartSvg(
    'Load against goodput (requests within every limit, per second) and throughput',
    'req/s',
    xName,
    [
      {
        name: 'goodput',
        color: '#1a7f37',
        points: steps.flatMap((step) =>
          step.goodput_requests_per_s === null
            ? []
            : [{ x: step.load, y: step.goodput_requests_per_s, note: `${step.load}: ${fmt(step.goodput_requests_per_s, 2)} req/s good` }],
        ),
      },
      {
        name: 'throughput',
        color: '#6e7781',
        points: steps.flatMap((step) =>
          step.throughput_requests_per_s === null
            ? []
            : [
                {
                  x: step.load,
                  y: step.throughput_requests_per_s,
                  note: `${step.load}: ${fmt(step.throughput_requests_per_s, 2)} req/s completed`,
                },
              ],
        ),
      },
    ],
    [],
  );
  const rows = steps
    .map(
      (step) =>
        `<tr><th>${step.load}</th><td>${escape(step.phase)}</td><td class="${step.decision === 'meets' ? 'good' : step.decision === 'misses' ? 'bad' : ''}">${escape(step.decision === 'invalid' ? `invalid (${step.invalid_reason ?? 'client behind'})` : step.decision)}</td><td>${step.requests}</td>${metrics.map((metric) => `<td>${fmt(step.percentile_ms[metric] ?? null)}</td><td>${step.violations[metric] ?? 0}</td>`).join('')}<td>${step.good_fraction === null ? '—' : `${(step.good_fraction * 100).toFixed(0)} %`}</td><td>${fmt(step.goodput_requests_per_s, 2)}</td><td>${fmt(step.throughput_requests_per_s, 2)}</td><td>${fmt(step.achieved_load, 2)}</td><td>${fmt(step.slip_ms, 1)}</td><td>${step.client_bound_samples}</td><td>${step.contaminated_samples ?? 0}</td></tr>`,
    )
    .join('');
  const answer =
    capacity.capacity === null
      ? 'No load was shown to meet the SLOs.'
      : `<b>${capacity.capacity} ${escape(capacity.unit)}</b> at ${p}` +
        (capacity.interval?.high
          ? `; the limit lies in [${capacity.interval.low}, ${capacity.interval.high}) ${escape(capacity.unit)} (${Math.round((1 - capacity.alpha) * 100)} % confidence)`
          : '; no load was shown to miss');
  return `<h2>Capacity</h2><p>${answer}. Knee: ${capacity.knee === null ? 'none seen' : `${capacity.knee} ${escape(capacity.unit)}`} (${escape(capacity.knee_rule)}). The search stopped because ${escape(capacity.stopped)}.</p>
<table><tr><th>${escape(xName)}</th><th>Step</th><th>Decision</th><th>Requests</th>${metrics.map((metric) => `<th>${escape(metric)} ${p} (≤ ${capacity.slo[metric as keyof typeof capacity.slo]} ms)</th><th>Over the limit</th>`).join('')}<th>Good</th><th>Goodput (req/s)</th><th>Throughput (req/s)</th><th>${capacity.by === 'rate' ? 'Sent (req/s)' : 'Achieved (req/s)'}</th><th>Slip (ms)</th><th>Client-bound samples</th><th>Contaminated samples</th></tr>${rows}</table>
<p><small>Rule: ${escape(capacity.rule)}.</small></p>
<div class="charts">${latency}${goodput}</div>`;
}

export const CAPACITY_REPORT: KindReport = {
  title: 'Capacity under an SLO',
  section: (result) => (result.capacity ? capacitySection(result.capacity) : ''),
  ownVerdicts: true,
};
