import { useMemo, useState } from 'react';
import { liveServerMetrics } from './live-server-metrics';
import type { AppServices, StartRunSpec } from '../../../shared/contract';
import { Chart } from '../components/Chart';
import { ErrorBox } from '../components/ErrorBox';
import { num } from '../components/format';
import { useAppStore } from '../state/store';
import { DEMO_RUN } from './HomeView';
import { RunForm } from './RunForm';
import { SummaryTable } from './SummaryTable';
import { useAction } from '../hooks/use-action';

/** A dashed horizontal line at an SLO, labelled; nothing when there is none. */
function sloLine(value: number | null | undefined, label: string) {
  return value == null
    ? undefined
    : {
        symbol: 'none',
        lineStyle: { type: 'dashed', color: '#cf222e' },
        label: { formatter: `${label} ${value} ms`, position: 'insideEndTop' },
        data: [{ yAxis: value }],
      };
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
  const [total, setTotal] = useState(0);
  const { error, run } = useAction();
  const job = live.job;
  const running = job !== null && (job.phase === 'starting' || job.phase === 'running');

  const start = async (spec: StartRunSpec) => {
    setSlo(spec.slo ?? null);
    setTotal((spec.requests ?? 0) + spec.warmup);
    await run(
      () => client.runs.start(spec),
      ({ jobId }) => useAppStore.getState().startJob(jobId),
    );
  };

  const ttftOption = useMemo(
    () => ({
      animation: false,
      title: { text: 'TTFT per request', textStyle: { fontSize: 13 } },
      tooltip: { trigger: 'item' },
      xAxis: { type: 'value', name: 's on the run clock', nameLocation: 'middle', nameGap: 24 },
      // The axis reaches the SLO, so its line is drawn even when every request is well inside it.
      yAxis: {
        type: 'value',
        name: 'TTFT (ms)',
        max:
          slo?.ttft_ms != null ? (extent: { max: number }) => Math.ceil(Math.max(extent.max, slo.ttft_ms! * 1.1) / 100) * 100 : undefined,
      },
      series: [
        {
          type: 'scatter',
          symbolSize: 5,
          data: live.ttft.map(([t, ttft]) => [t / 1000, ttft]),
          markLine: sloLine(slo?.ttft_ms, 'SLO TTFT'),
        },
      ],
    }),
    [live.ttft, slo],
  );

  const serverMetrics = useMemo(() => liveServerMetrics(live.telemetry), [live.telemetry]);
  const serverMetricsOption = useMemo(
    () => ({
      animation: false,
      title: { text: "The server's own /metrics: generation speed and queue", textStyle: { fontSize: 13 } },
      legend: { bottom: 0 },
      tooltip: { trigger: 'axis' },
      grid: { top: 50, bottom: 60 },
      xAxis: { type: 'value', name: 's', nameLocation: 'middle', nameGap: 24 },
      yAxis: [
        { type: 'value', name: 'tokens/s' },
        { type: 'value', name: 'requests', minInterval: 1 },
      ],
      series: [
        { name: 'generated tokens/s', type: 'line', showSymbol: false, data: serverMetrics.tokensPerS },
        { name: 'decoding', type: 'line', step: 'end', showSymbol: false, yAxisIndex: 1, data: serverMetrics.processing },
        { name: 'waiting for a slot', type: 'line', step: 'end', showSymbol: false, yAxisIndex: 1, data: serverMetrics.waiting },
      ],
    }),
    [serverMetrics],
  );

  const gpuAvailable = live.telemetry.some((tick) => tick.gpus.length > 0);
  const telemetryOption = useMemo(() => {
    // Telemetry and request sends share the run's clock, so the markers line up with the samples.
    const x = (t: number) => t / 1000;
    const markers = {
      name: 'requests sent',
      type: 'scatter',
      symbol: 'triangle',
      symbolSize: 6,
      itemStyle: { opacity: 0.5 },
      data: live.ttft.map(([t]) => [x(t), 0]),
    };
    const series = gpuAvailable
      ? [
          {
            name: 'GPU memory (MiB)',
            type: 'line',
            showSymbol: false,
            data: live.telemetry.map((tick) => [x(tick.t), tick.gpus[0]?.memoryUsedMib ?? null]),
          },
          {
            name: 'GPU utilization (%)',
            type: 'line',
            showSymbol: false,
            yAxisIndex: 1,
            data: live.telemetry.map((tick) => [x(tick.t), tick.gpus[0]?.utilizationPct ?? null]),
          },
          markers,
        ]
      : [
          {
            name: 'server RSS (MiB)',
            type: 'line',
            showSymbol: false,
            data: live.telemetry.map((tick) => [x(tick.t), tick.serverProcess ? tick.serverProcess.rssBytes / 2 ** 20 : null]),
          },
          {
            name: 'server CPU (%)',
            type: 'line',
            showSymbol: false,
            yAxisIndex: 1,
            data: live.telemetry.map((tick) => [x(tick.t), tick.serverProcess?.cpuPct ?? null]),
          },
          markers,
        ];
    return {
      animation: false,
      title: {
        text: gpuAvailable ? 'GPU memory and utilization' : 'Server process (no GPU telemetry on this machine)',
        textStyle: { fontSize: 13 },
      },
      legend: { bottom: 0 },
      tooltip: { trigger: 'axis' },
      grid: { top: 50, bottom: 60 },
      xAxis: { type: 'value', name: 's', nameLocation: 'middle', nameGap: 24 },
      yAxis: [
        { type: 'value', name: gpuAvailable ? 'MiB' : 'MiB' },
        { type: 'value', name: '%' },
      ],
      series,
    };
  }, [live.telemetry, live.ttft, gpuAvailable]);

  return (
    <section aria-labelledby="run-title">
      <h1 id="run-title">Run</h1>
      <RunForm
        client={client}
        initial={initial}
        running={running}
        onStart={(spec) => void start(spec)}
        onCancel={() => job && void client.runs.cancel(job.jobId)}
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
          {total > 0 && <progress max={total} value={job.finished} />} {job.finished} done, {job.failed} failed
          {job.runId && (
            <>
              {' '}
              · run <code>{job.runId.slice(0, 8)}</code>
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
                {[
                  slo.ttft_ms != null && `TTFT ≤ ${slo.ttft_ms} ms`,
                  slo.tpot_ms != null && `TPOT ≤ ${slo.tpot_ms} ms`,
                  slo.e2e_ms != null && `E2E ≤ ${slo.e2e_ms} ms`,
                ]
                  .filter(Boolean)
                  .join(', ')}
                ); the result counts requests within it as goodput.
              </small>
            </p>
          )}
          <h2>One request, as it streams</h2>
          <pre className="log" data-testid="sample-text">
            {job.sampleText || '…'}
          </pre>
          {job.summary && (
            <>
              <h2>
                Result <small>({num(job.summary.throughput.output_tokens_per_s, 'output tok/s')})</small>
              </h2>
              <SummaryTable summary={job.summary} />
            </>
          )}
        </div>
      )}
    </section>
  );
}
