import { useEffect, useMemo, useState } from 'react';
import type { AppServices } from '../../../shared/contract';
import { BOOTSTRAP_MAX_SAMPLES, CDF_METRICS, isRequestNoiseOnly, type CdfMetric, type Comparison } from '../../../shared/contract/compare';
import { METRIC_TABLE } from '../../../shared/metric-table';
import { Chart } from '../components/Chart';
import { ErrorBox } from '../components/ErrorBox';
import { num } from '../components/format';
import { TableScroll } from '../components/TableScroll';
import { useAppStore } from '../state/store';
import { routeOf } from '../state/route';
import { tradeOffOption } from './compare-trade-off';
import { cdfChartOption, vramChartOption } from './compare-charts';
import { useAction } from '../hooks/use-action';

const CDF_NOTE = 'CDFs are drawn from up to 256 evenly spaced quantiles per run, the fastest and slowest request included.';

export function CompareView({ client }: { client: AppServices }) {
  const selection = useAppStore((state) => state.compareSelection);
  const linkedIds = useAppStore((state) => (state.route.view === 'compare' ? (state.route.params.ids ?? null) : null));
  // #/compare?ids=A,B names the runs: a link or a reload compares the same ones.
  useEffect(() => {
    const ids = linkedIds?.split(',').filter(Boolean) ?? null;
    if (ids && ids.join(',') !== useAppStore.getState().compareSelection.join(',')) useAppStore.getState().setCompareSelection(ids);
  }, [linkedIds]);
  const [comparison, setComparison] = useState<Comparison | null>(null);
  const { error, run } = useAction();
  const [metric, setMetric] = useState<CdfMetric>(CDF_METRICS[0]!);

  useEffect(() => {
    setComparison(null);
    if (selection.length >= 2) void run(() => client.runs.compare(selection), setComparison);
  }, [client, selection]);

  const option = useMemo(() => cdfChartOption(comparison?.runs ?? [], metric), [comparison, metric]);

  const tradeOff = useMemo(() => tradeOffOption(comparison?.runs ?? []), [comparison]);
  const vram = useMemo(() => vramChartOption(comparison?.runs ?? []), [comparison]);
  const groupNames = [...new Set((comparison?.runs ?? []).flatMap((run) => Object.keys(run.groups)))];
  const hasVram = (comparison?.runs ?? []).some((run) => run.vramTimeline.length > 0);

  if (selection.length < 2)
    return (
      <section>
        <h1>Compare</h1>
        <p className="empty">Select two or more runs in Runs, then press Compare.</p>
      </section>
    );
  return (
    <section aria-labelledby="compare-title">
      <h1 id="compare-title">Compare</h1>
      <RaceButton selection={selection} />
      <ErrorBox error={error} />
      {!comparison && !error && <p>Comparing…</p>}
      {comparison && (
        <>
          {comparison.notes.map((note) => (
            <p key={note} className="error">
              {note}
            </p>
          ))}
          <TableScroll>
            <table data-testid="compare-table">
              <thead>
                <tr>
                  <th>Metric</th>
                  {comparison.runs.map((run, index) => (
                    <th key={run.runId}>
                      {index === 0 ? 'Baseline ' : ''}
                      {run.label}
                      <br />
                      <small>{run.requests} requests</small>
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {comparison.rows.map((row) => (
                  <tr key={row.metric}>
                    <th>{row.metric}</th>
                    {row.values.map((value, index) => {
                      const diff = row.differences[index];
                      return (
                        <td key={index}>
                          {num(value, row.unit, row.unit === 'ms' ? 2 : row.unit === 'J' ? 4 : 1)}
                          {diff && diff.difference !== null && (
                            <div className={`verdict verdict-${diff.verdict.replace(/\s+/g, '-')}`}>
                              {diff.difference >= 0 ? '+' : ''}
                              {diff.difference.toFixed(2)} {row.unit}
                              {diff.ci && ` [${diff.ci[0].toFixed(2)}, ${diff.ci[1].toFixed(2)}]`} —{' '}
                              {isRequestNoiseOnly(diff.note) ? 'request noise only' : diff.verdict}
                            </div>
                          )}
                        </td>
                      );
                    })}
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
          <p>
            <small>
              Differences are against the baseline (first column) with 95 % intervals of the request noise only (bootstrap up to{' '}
              {BOOTSTRAP_MAX_SAMPLES.toLocaleString('en-US')} requests per run, order-statistic intervals beyond). Each run is a single
              window, so run-to-run drift is not in these intervals and no faster/slower verdict is given here: an experiment repeats
              windows in rotated order and gives corrected verdicts.
            </small>
          </p>
          <div className="toolbar">
            {CDF_METRICS.map((key) => (
              <button key={key} type="button" className={metric === key ? 'selected' : ''} onClick={() => setMetric(key)}>
                {METRIC_TABLE[key].label}
              </button>
            ))}
          </div>
          <Chart label="compare-cdf" option={option} height={320} />
          <p>
            <small>{CDF_NOTE}</small>
          </p>
          <h2>Per group</h2>
          <TableScroll>
            <table data-testid="compare-groups">
              <thead>
                <tr>
                  <th>Group (TTFT p50)</th>
                  {comparison.runs.map((run) => (
                    <th key={run.runId}>{run.label}</th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {groupNames.map((group) => (
                  <tr key={group}>
                    <th>{group}</th>
                    {comparison.runs.map((run) => (
                      <td key={run.runId}>
                        {run.groups[group] ? `${num(run.groups[group]!.ttftP50Ms, 'ms', 2)} (n=${run.groups[group]!.requests})` : '—'}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
          <div className="columns">
            <Chart label="compare-throughput-latency" option={tradeOff} height={300} />
            {hasVram ? (
              <Chart label="compare-vram" option={vram} height={300} />
            ) : (
              <p className="empty">
                No GPU memory timelines: none of these runs has GPU memory of its own on record (no GPU tool, or the engine ran on the CPU).
              </p>
            )}
          </div>
        </>
      )}
    </section>
  );
}

/** Two to four compared runs can race: each run's first measured request, side by side at its recorded pace. */
function RaceButton({ selection }: { selection: string[] }) {
  if (selection.length > 4) return null;
  return (
    <div className="toolbar">
      <button
        type="button"
        onClick={() => useAppStore.getState().navigate(routeOf('race', null, { lanes: selection.join(',') }))}
        title="Play each run's first measured request side by side, at the pace it was measured"
      >
        Race these runs
      </button>
    </div>
  );
}
