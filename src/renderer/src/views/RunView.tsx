import { useMemo, useState } from 'react';
import { liveServerMetrics } from './live-server-metrics';
import type { AppServices, StartRunSpec } from '../../../shared/contract';
import { SLO_METRICS, type RunSummary } from '../../../shared/contract/runs';
import { METRIC_TABLE } from '../../../shared/metric-table';
import { Chart } from '../components/Chart';
import { ErrorBox } from '../components/ErrorBox';
import { num } from '../components/format';
import { useAppStore } from '../state/store';
import { DEMO_RUN } from './HomeView';
import { RunForm } from './RunForm';
import { SummaryTable } from './SummaryTable';
import { useAction } from '../hooks/use-action';
import { serverMetricsChartOption, telemetryChartOption, ttftChartOption } from './run-live-charts';

/** The rate a run is known by: output tokens/s, or for embeddings and reranking the texts per second (they generate nothing). */
function headlineRate(summary: RunSummary): string {
  if (summary.embeddings) return num(summary.embeddings.inputs_per_s, 'inputs/s');
  if (summary.rerank) return num(summary.rerank.inputs_per_s, 'documents/s');
  return num(summary.throughput.output_tokens_per_s, 'output tok/s');
}

export function RunView({ client }: { client: AppServices }) {
  const live = useAppStore((state) => state.live);
  const route = useAppStore((state) => state.route);
  // A model's "Run" action arrives as #/run?model=…
  const defaultProfile = useAppStore((state) => state.defaultProfile);
  const initial = useMemo<StartRunSpec>(
    () => ({ ...DEMO_RUN, profileName: defaultProfile, ...(route.params.model ? { model: route.params.model } : {}) }),
    [route.params.model, defaultProfile],
  );
  const [slo, setSlo] = useState<StartRunSpec['slo']>(null);
  const { error, run } = useAction();
  const job = live.job;
  const running = job !== null && (job.phase === 'starting' || job.phase === 'running');

  const start = async (spec: StartRunSpec) => {
    setSlo(spec.slo ?? null);
    await run(
      () => client.runs.start(spec),
      ({ jobId }) => useAppStore.getState().startJob(jobId),
    );
  };

  const ttftOption = useMemo(() => ttftChartOption(live.ttft, slo), [live.ttft, slo]);
  const serverMetrics = useMemo(() => liveServerMetrics(live.telemetry), [live.telemetry]);
  const serverMetricsOption = useMemo(() => serverMetricsChartOption(serverMetrics), [serverMetrics]);
  const telemetryOption = useMemo(() => telemetryChartOption(live.telemetry, live.ttft), [live.telemetry, live.ttft]);

  return (
    <section aria-labelledby="run-title">
      <h1 id="run-title">Run</h1>
      <RunForm
        client={client}
        initial={initial}
        running={running}
        onStart={(spec) => void start(spec)}
        onCancel={() => job && void run(() => client.tasks.cancel(job.jobId))}
      />
      <ErrorBox error={error} />
      {!job && <p className="empty">Pick a workload and a model, then start a run. Results appear here live and are stored in Runs.</p>}
      {job && (
        <div aria-live="polite">
          <p data-testid="run-phase">
            <span className={`badge badge-${job.phase === 'finished' ? 'ok' : job.phase === 'failed' ? 'missing' : 'warning'}`}>
              {job.phase}
            </span>{' '}
            {job.message}
          </p>
          {job.total ? <progress max={job.total} value={job.done} /> : null} {job.done} done, {job.detail.failed} failed
          {job.detail.runId && (
            <>
              {' '}
              · run <code>{job.detail.runId.slice(0, 8)}</code>
            </>
          )}
          {job.error && <ErrorBox error={new Error(job.error.message)} />}
          <div className="columns">
            <Chart label="ttft-scatter" option={ttftOption} />
            {serverMetrics.processing.length > 0 || serverMetrics.tokensPerS.length > 0 ? (
              <Chart label="server-metrics" option={serverMetricsOption} />
            ) : (
              <p className="empty">No /metrics readings yet (an endpoint without a metrics URL has none).</p>
            )}
            <Chart label="telemetry-timeline" option={telemetryOption} />
          </div>
          {slo && (
            <p data-testid="slo-lines">
              <small>
                The dashed line on the TTFT chart is the SLO; the run's SLO is (
                {SLO_METRICS.flatMap((metric) =>
                  slo[metric] != null ? [`${METRIC_TABLE[metric].label} ≤ ${slo[metric]} ${METRIC_TABLE[metric].unit}`] : [],
                ).join(', ')}
                ); the result counts requests within it as goodput.
              </small>
            </p>
          )}
          <h2>One request, as it streams</h2>
          <pre className="log" data-testid="sample-text">
            {job.detail.sampleText || '…'}
          </pre>
          {job.detail.summary && (
            <>
              <h2>
                Result <small>({headlineRate(job.detail.summary)})</small>
              </h2>
              <SummaryTable summary={job.detail.summary} />
            </>
          )}
        </div>
      )}
    </section>
  );
}
