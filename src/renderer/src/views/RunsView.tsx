import { useEffect, useMemo, useState } from 'react';
import type { AppServices, RunDetail, RunListItem } from '../../../shared/contract';
import { ErrorBox } from '../components/ErrorBox';
import { ms, num, when } from '../components/format';
import { useAppStore } from '../state/store';
import { SummaryTable } from './SummaryTable';
import { useAction } from '../hooks/use-action';
import { downloadFile } from '../components/download';

const STATUS_BADGE: Record<string, string> = {
  completed: 'ok',
  running: 'warning',
  aborted: 'missing',
  interrupted: 'missing',
  failed: 'missing',
};

export function RunsView({ client }: { client: AppServices }) {
  const [runs, setRuns] = useState<RunListItem[] | null>(null);
  const [filter, setFilter] = useState('');
  const [detail, setDetail] = useState<RunDetail | null>(null);
  const { error, run: call } = useAction();
  const selection = useAppStore((state) => state.compareSelection);
  const { setCompareSelection, setView } = useAppStore.getState();
  const jobPhase = useAppStore((state) => state.live.job?.phase);

  const load = () => call(() => client.runs.list(), setRuns);
  useEffect(() => void load(), [client, jobPhase]);

  const shown = useMemo(() => {
    const terms = filter.toLowerCase().split(/\s+/).filter(Boolean);
    return (runs ?? []).filter((run) =>
      terms.every((term) =>
        [run.model, run.quantization, run.engine, run.workload, run.status, run.kind, run.startedAt].some((field) =>
          field?.toLowerCase().includes(term),
        ),
      ),
    );
  }, [runs, filter]);

  const toggle = (id: string) => setCompareSelection(selection.includes(id) ? selection.filter((item) => item !== id) : [...selection, id]);
  const exportRun = async (id: string) => {
    await call(
      () => client.runs.exportRun(id),
      (files) => {
        downloadFile(`${files.fileBase}-manifest.json`, files.manifest, 'application/json');
        downloadFile(`${files.fileBase}-summary.json`, files.summary, 'application/json');
        downloadFile(`${files.fileBase}-requests.jsonl`, files.requestsJsonl, 'application/x-ndjson');
        downloadFile(`${files.fileBase}-requests.csv`, files.requestsCsv, 'text/csv');
        downloadFile(`${files.fileBase}-telemetry.json`, files.telemetry, 'application/json');
      },
    );
  };
  const remove = async (id: string) => {
    if (!window.confirm('Delete this run and all its requests?')) return;
    await call(() => client.runs.remove(id));
    setDetail(null);
    void load();
  };

  return (
    <section aria-labelledby="runs-title">
      <h1 id="runs-title">Runs</h1>
      <div className="toolbar">
        <label>
          Filter{' '}
          <input
            value={filter}
            onChange={(event) => setFilter(event.target.value)}
            placeholder="model, quantization, workload, status, date…"
            size={40}
          />
        </label>
        <button type="button" className="primary" disabled={selection.length < 2} onClick={() => setView('compare')}>
          Compare {selection.length} selected
        </button>
      </div>
      <ErrorBox error={error} />
      {runs && runs.length === 0 && <p className="empty">No runs yet. Start one from Home (“Run the demo”) or the Run view.</p>}
      {shown.length > 0 && (
        <table data-testid="runs-table">
          <thead>
            <tr>
              <th>Compare</th>
              <th>Started</th>
              <th>Status</th>
              <th>Model</th>
              <th>Quant</th>
              <th>Engine</th>
              <th>Workload</th>
              <th>Requests</th>
              <th>TTFT p50</th>
              <th>Output tok/s</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {shown.map((run) => (
              <tr key={run.runId} data-run={run.runId}>
                <td>
                  <input
                    type="checkbox"
                    aria-label={`compare ${run.runId.slice(0, 8)}`}
                    checked={selection.includes(run.runId)}
                    onChange={() => toggle(run.runId)}
                  />
                </td>
                <td>
                  <button type="button" className="link" onClick={() => void call(() => client.runs.get(run.runId), setDetail)}>
                    {when(run.startedAt)}
                  </button>
                </td>
                <td>
                  <span className={`badge badge-${STATUS_BADGE[run.status] ?? 'warning'}`} title={run.statusReason ?? ''}>
                    {run.status}
                  </span>
                  {run.statusReason && <small> {run.statusReason}</small>}
                </td>
                <td>{run.model ?? '—'}</td>
                <td>{run.quantization ?? '—'}</td>
                <td>{run.engine ?? '—'}</td>
                <td>{run.workload ?? run.kind}</td>
                <td>{run.requests}</td>
                <td>{ms(run.ttftP50)}</td>
                <td>{num(run.outputTokensPerS, 'tok/s')}</td>
                <td>
                  <button type="button" onClick={() => exportRun(run.runId)}>
                    Export
                  </button>{' '}
                  <button type="button" onClick={() => remove(run.runId)}>
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {detail && (
        <div className="card" data-testid="run-detail">
          <h2>
            Run {detail.item.runId.slice(0, 8)}{' '}
            <small>
              {detail.item.model} · {detail.item.workload}
            </small>
          </h2>
          {detail.summary && 'metrics' in detail.summary ? (
            <SummaryTable summary={detail.summary} />
          ) : (
            <pre>{JSON.stringify(detail.summary, null, 2)}</pre>
          )}
          <details>
            <summary>Manifest (configuration, engine, environment)</summary>
            <pre className="log">{JSON.stringify(detail.manifest, null, 2)}</pre>
          </details>
        </div>
      )}
    </section>
  );
}
