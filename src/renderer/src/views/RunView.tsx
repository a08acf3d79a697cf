import { useEffect, useMemo, useState } from 'react';
import type { AppServices, StartRunSpec, WorkloadInfo } from '../../../shared/contract';
import { Chart } from '../components/Chart';
import { ErrorBox } from '../components/ErrorBox';
import { num } from '../components/format';
import { useAppStore } from '../state/store';
import { DEMO_RUN } from './HomeView';
import { SummaryTable } from './SummaryTable';
import { useAction } from '../hooks/use-action';

export function RunView({ client }: { client: AppServices }) {
  const live = useAppStore((state) => state.live);
  const [workloads, setWorkloads] = useState<WorkloadInfo[]>([]);
  const [spec, setSpec] = useState<StartRunSpec>(DEMO_RUN);
  const { error, run } = useAction();
  const job = live.job;
  const running = job !== null && (job.phase === 'starting' || job.phase === 'running');

  useEffect(() => void run(() => client.workloads.list(), setWorkloads), [client, run]);

  const start = async () => {
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
      yAxis: { type: 'value', name: 'TTFT (ms)' },
      series: [{ type: 'scatter', symbolSize: 5, data: live.ttft.map(([t, ttft]) => [t / 1000, ttft]) }],
    }),
    [live.ttft],
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

  const total = spec.requests ?? 0;
  return (
    <section aria-labelledby="run-title">
      <h1 id="run-title">Run</h1>
      <form
        className="toolbar wrap"
        onSubmit={(event) => {
          event.preventDefault();
          void start();
        }}
      >
        <label>
          Workload{' '}
          <select value={spec.workload} onChange={(event) => setSpec({ ...spec, workload: event.target.value })}>
            {workloads.map((workload) => (
              <option key={workload.name}>{workload.name}</option>
            ))}
          </select>
        </label>
        <label>
          Model <input value={spec.model ?? ''} onChange={(event) => setSpec({ ...spec, model: event.target.value || null })} size={22} />
        </label>
        <label>
          Concurrency{' '}
          <input
            type="number"
            min={1}
            value={spec.concurrency ?? 1}
            onChange={(event) => setSpec({ ...spec, concurrency: Number(event.target.value) })}
          />
        </label>
        <label>
          Requests{' '}
          <input
            type="number"
            min={1}
            value={spec.requests ?? 1}
            onChange={(event) => setSpec({ ...spec, requests: Number(event.target.value) })}
          />
        </label>
        <label>
          Warmup{' '}
          <input type="number" min={0} value={spec.warmup} onChange={(event) => setSpec({ ...spec, warmup: Number(event.target.value) })} />
        </label>
        <label>
          <input type="checkbox" checked={spec.private} onChange={(event) => setSpec({ ...spec, private: event.target.checked })} /> Private
          (store hashes, not text)
        </label>
        <button type="submit" className="primary" disabled={running}>
          Start run
        </button>
        {running && (
          <button type="button" onClick={() => client.runs.cancel(job.jobId)}>
            Cancel
          </button>
        )}
      </form>
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
          <progress max={Math.max(1, total + spec.warmup)} value={job.finished} /> {job.finished} done, {job.failed} failed
          {job.runId && (
            <>
              {' '}
              · run <code>{job.runId.slice(0, 8)}</code>
            </>
          )}
          {job.error && <ErrorBox error={new Error(job.error.message)} />}
          <div className="columns">
            <Chart label="ttft-scatter" option={ttftOption} />
            <Chart label="telemetry-timeline" option={telemetryOption} />
          </div>
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
