import { useMemo } from 'react';
import type { CapacityResult } from '../../../shared/contract/experiments';
import { SLO_METRICS } from '../../../shared/contract/runs';
import { Chart } from '../components/Chart';
import { ms, num, pct } from '../components/format';
import { capacityChartOption } from './capacity-chart';

/** A capacity search as the Experiments view shows it: the answer, the chart and every load measured. */
export function CapacityPanel({ capacity }: { capacity: CapacityResult }) {
  const option = useMemo(() => capacityChartOption(capacity), [capacity]);
  const metrics = SLO_METRICS.filter((metric) => capacity.slo[metric] !== undefined);
  const p = `p${capacity.percentile}`;
  const steps = [...capacity.steps].sort((a, b) => a.load - b.load);
  return (
    <div data-testid="capacity-result">
      <p>
        <strong data-testid="capacity-answer">
          {capacity.capacity === null ? 'No load was shown to meet the SLOs' : `Capacity ${capacity.capacity} ${capacity.unit} at ${p}`}
        </strong>
        {capacity.interval?.high != null &&
          ` — the limit lies in [${capacity.interval.low}, ${capacity.interval.high}) ${capacity.unit} (${Math.round((1 - capacity.alpha) * 100)} % confidence)`}
        . Knee: {capacity.knee === null ? 'none seen' : `${capacity.knee} ${capacity.unit}`}.
      </p>
      <Chart label="capacity" option={option} height={320} />
      <table>
        <thead>
          <tr>
            <th>{capacity.by === 'rate' ? 'Rate (req/s)' : capacity.by === 'users' ? 'Users' : 'Concurrency'}</th>
            <th>Step</th>
            <th>Decision</th>
            <th>Requests</th>
            {metrics.map((metric) => (
              <th key={metric}>
                {metric} {p} (≤ {capacity.slo[metric]} ms)
              </th>
            ))}
            <th>Over a limit</th>
            <th>Good</th>
            <th>Goodput</th>
            <th>Throughput</th>
            {capacity.by === 'rate' && <th>Sent</th>}
          </tr>
        </thead>
        <tbody>
          {steps.map((step) => (
            <tr key={step.load} data-decision={step.decision}>
              <th>{step.load}</th>
              <td>{step.phase}</td>
              <td className={step.decision === 'misses' ? 'error' : undefined}>
                {step.decision === 'invalid' ? `invalid (${step.invalid_reason ?? 'client behind'})` : step.decision}
              </td>
              <td>{step.requests}</td>
              {metrics.map((metric) => (
                <td key={metric}>{ms(step.percentile_ms[metric] ?? null)}</td>
              ))}
              <td>{metrics.map((metric) => step.violations[metric] ?? 0).join(' / ')}</td>
              <td>{pct(step.good_fraction)}</td>
              <td>{num(step.goodput_requests_per_s, 'req/s', 2)}</td>
              <td>{num(step.throughput_requests_per_s, 'req/s', 2)}</td>
              {capacity.by === 'rate' && <td>{num(step.achieved_load, 'req/s', 2)}</td>}
            </tr>
          ))}
        </tbody>
      </table>
      <p>
        <small>Rule: {capacity.rule}.</small>
      </p>
    </div>
  );
}
