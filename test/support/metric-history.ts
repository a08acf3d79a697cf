import type { HistoryBuild, MetricHistory } from '../../src/shared/contract/history';

/** One build of a history: a run per value (null: a run without one), its mean the first value; override what a case needs. */
export function historyBuild(
  label: string,
  values: (number | null)[],
  interval: [number, number] | null,
  overrides: Partial<HistoryBuild> = {},
): HistoryBuild {
  return {
    build: label,
    label,
    commit: label,
    backend: 'cpu',
    firstStartedAt: '2026-01-01T00:00:00Z',
    runs: values.map((value, index) => ({
      runId: `${label}-run-${index}`,
      startedAt: '2026-01-01T00:00:00Z',
      value,
      requests: 3,
      note: null,
    })),
    mean: values[0] ?? null,
    interval,
    intervalNote: interval ? null : 'one run: an interval needs two or more',
    changePercent: null,
    ...overrides,
  };
}

/** The p50 TPOT history of one configuration (closed loop, concurrency 1) over `builds`. */
export function tpotHistory(builds: HistoryBuild[], names: { model?: string | null; workload?: string | null } = {}): MetricHistory {
  return {
    metric: 'tpot_ms',
    statistic: 'p50',
    unit: 'ms',
    higherIsBetter: false,
    notes: [],
    configurations: [
      {
        key: 'k',
        model: { sha256: null, ref: names.model ?? null },
        workload: { name: names.workload ?? null, revision: null },
        load: 'closed, concurrency 1',
        profileName: null,
        builds,
      },
    ],
  };
}
