import { useEffect, useMemo, useState } from 'react';
import type { AppServices } from '../../../shared/contract';
import { HISTORY_METRIC_SPECS, type HistoryConfiguration, type MetricHistory } from '../../../shared/contract/history';
import { Chart } from '../components/Chart';
import { ErrorBox } from '../components/ErrorBox';
import { num, when } from '../components/format';
import { TableScroll } from '../components/TableScroll';
import { useAction } from '../hooks/use-action';
import { routeOf } from '../state/route';
import { useAppStore } from '../state/store';
import { historyChartOption, metricLabel } from './history-chart';

const DEFAULT_METRIC = 'tpot_ms:p50';

function describeConfiguration(configuration: HistoryConfiguration): string {
  const model = configuration.model.ref ?? 'unknown model';
  const sha = configuration.model.sha256 ? ` (sha256 ${configuration.model.sha256.slice(0, 12)})` : '';
  const workload = `${configuration.workload.name ?? 'unknown workload'} @ ${configuration.workload.revision?.slice(0, 12) ?? '?'}`;
  return `${model}${sha} · ${workload} · ${configuration.load} · profile ${configuration.profileName ?? 'not recorded'}`;
}

function HistoryTable({ history, configuration }: { history: MetricHistory; configuration: HistoryConfiguration }) {
  const digits = history.unit === 'ms' ? 2 : 1;
  return (
    <TableScroll>
      <table data-testid="history-table">
        <thead>
          <tr>
            <th>Build</th>
            <th>Runs (each run&#8217;s value)</th>
            <th>Mean</th>
            <th>95 % interval</th>
            <th>Change vs first build</th>
          </tr>
        </thead>
        <tbody>
          {configuration.builds.map((build, index) => (
            <tr key={build.build}>
              <th>
                {build.label}
                <br />
                <small>first ran {when(build.firstStartedAt)}</small>
              </th>
              <td className="wraps">
                {build.runs.length}:{' '}
                {build.runs.map((run) => (
                  <span key={run.runId} title={run.note ?? `run ${run.runId}`} className={run.value === null ? 'empty' : undefined}>
                    {run.value === null ? '—' : run.value.toFixed(digits)}{' '}
                  </span>
                ))}
                {build.runs
                  .filter((run) => run.note !== null)
                  .map((run) => (
                    <div key={run.runId}>
                      <small>
                        run {run.runId.slice(0, 8)}: {run.note}
                      </small>
                    </div>
                  ))}
              </td>
              <td>{num(build.mean, history.unit, digits)}</td>
              <td className="wraps">
                {build.interval ? (
                  `[${build.interval[0].toFixed(digits)}, ${build.interval[1].toFixed(digits)}]`
                ) : (
                  <span className="empty">{build.intervalNote}</span>
                )}
              </td>
              <td>
                {index === 0
                  ? 'first build'
                  : build.changePercent === null
                    ? '—'
                    : `${build.changePercent >= 0 ? '+' : ''}${build.changePercent.toFixed(1)} %`}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}

function ConfigurationHistory({ history, configuration }: { history: MetricHistory; configuration: HistoryConfiguration }) {
  const option = useMemo(() => historyChartOption(history, configuration), [history, configuration]);
  return (
    <section aria-label={`configuration ${configuration.key}`} data-testid="history-configuration">
      <h2>
        Configuration <code>{configuration.key}</code>
      </h2>
      <p>
        <small>{describeConfiguration(configuration)}</small>
      </p>
      <Chart label={`history ${metricLabel(history)} ${configuration.key}`} option={option} height={300} />
      <HistoryTable history={history} configuration={configuration} />
    </section>
  );
}

/** A metric across engine builds, one chart and table per comparable configuration. */
export function HistoryView({ client }: { client: AppServices }) {
  const linkedMetric = useAppStore((state) => (state.route.view === 'history' ? (state.route.params.metric ?? null) : null));
  const metric = linkedMetric && HISTORY_METRIC_SPECS.includes(linkedMetric) ? linkedMetric : DEFAULT_METRIC;
  const [history, setHistory] = useState<MetricHistory | null>(null);
  const { error, run } = useAction();

  useEffect(() => {
    setHistory(null);
    void run(() => client.runs.history({ metric }), setHistory);
  }, [client, metric, run]);

  return (
    <section aria-labelledby="history-title">
      <h1 id="history-title">History</h1>
      <p>
        Did a new llama.cpp build or driver make this slower? Completed runs of the same model file, workload revision, server profile and
        load, grouped by engine build in the order each build first ran. Each dot is one run&#8217;s own value over its successful measured
        requests; each build shows the mean of its runs with a 95 % t interval.
      </p>
      <div className="toolbar">
        <label>
          Metric{' '}
          <select
            value={metric}
            onChange={(event) => useAppStore.getState().navigate(routeOf('history', null, { metric: event.target.value }))}
          >
            {HISTORY_METRIC_SPECS.map((spec) => (
              <option key={spec} value={spec}>
                {spec}
              </option>
            ))}
          </select>
        </label>
      </div>
      <ErrorBox error={error} />
      {!history && !error && <p>Reading runs…</p>}
      {history && (
        <>
          {history.configurations.length === 0 && (
            <p className="empty" data-testid="history-empty">
              No completed runs to show yet. Run the same workload on the same model with another build:{' '}
              <code>inferlab check --baseline RUN --engine PATH</code>, or <code>inferlab run</code> with the same workload, model, profile
              and load after updating llama.cpp.
            </p>
          )}
          {history.notes
            .filter((note) => history.configurations.length > 0 || !note.startsWith('No completed run'))
            .map((note) => (
              <p key={note} className="note">
                {note}
              </p>
            ))}
          {history.configurations.map((configuration) => (
            <ConfigurationHistory key={configuration.key} history={history} configuration={configuration} />
          ))}
        </>
      )}
    </section>
  );
}
