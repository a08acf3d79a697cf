import type { ExperimentResult } from '../../../shared/contract/experiments';
import { formatMs, formatNumber, formatTable } from '../format';
import { CAPACITY_DEFAULTS } from '../../../shared/experiment-defaults';
import { percentileOption } from '../args';
import { text, type KindFlags } from './kind-flags';
import type { CliKind } from './cli-kind';
import { CAPACITY_TEXT } from './capacity-text';
import { usageLinesOf } from './kind-text';

/** The usage a mistaken flag of this kind is refused with. */
const CAPACITY_USAGE = usageLinesOf(CAPACITY_TEXT).join('\n       ');

/** A capacity search: every load it measured, in load order, then the answer and the rule it was decided by. */
const perSecond = (value: number | null) => (value === null ? '—' : `${formatNumber(value, 2)} req/s`);

function capacityTable(capacity: NonNullable<ExperimentResult['capacity']>, reason: string): string {
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

/** --slo (shared), --by, --percentile, --start, --max-load and --keep-cache; the look size follows the percentile unless --requests says. */
const CAPACITY_FLAGS: KindFlags<'capacity'> = {
  flags: {
    percentile: { type: 'string' },
    by: { type: 'string' },
    start: { type: 'string' },
    'max-load': { type: 'string' },
    'keep-cache': { type: 'boolean' },
  },
  fromFlags: (values, { usage, slo }) => {
    const by = text(values, 'by') ?? 'rate';
    if (by !== 'rate' && by !== 'concurrency' && by !== 'users') usage(`--by must be rate, concurrency or users, got "${by}"`);
    if (!slo) usage('experiment capacity needs --slo, e.g. --slo ttft=500,tpot=50');
    const load = (flag: string): number | null => {
      const given = text(values, flag);
      if (given === undefined) return null;
      const value = Number(given);
      if (!Number.isFinite(value) || value <= 0) usage(`--${flag} must be a positive number, got "${given}"`);
      return value;
    };
    return {
      fields: {
        capacity: {
          by: by as 'rate' | 'concurrency' | 'users',
          percentile: percentileOption(text(values, 'percentile'), CAPACITY_DEFAULTS.percentile, CAPACITY_USAGE),
          start: load('start'),
          maxLoad: load('max-load'),
          keepCache: values['keep-cache'] === true,
        },
        ...(values.requests === undefined ? { requestsPerWindow: null } : {}),
      },
    };
  },
};

export const CAPACITY_CLI: CliKind<'capacity'> = {
  text: CAPACITY_TEXT,
  options: CAPACITY_FLAGS,
  table: (result) => (result.capacity ? capacityTable(result.capacity, result.recommendation.reason) : null),
  // A capacity search measures loads, not conditions: energy per condition does not apply.
  withoutEfficiency: true,
};
