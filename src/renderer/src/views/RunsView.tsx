import { useEffect, useState } from 'react';
import type { AppServices, RunDetail, RunListItem, SkippedRun } from '../../../shared/contract';
import { ErrorBox } from '../components/ErrorBox';
import { TableScroll } from '../components/TableScroll';
import { ms, num, when } from '../components/format';
import { useAppStore } from '../state/store';
import { SummaryTable } from './SummaryTable';
import { useAction } from '../hooks/use-action';
import { downloadBytes } from '../components/download';
import { RowsSkeleton } from '../components/Skeleton';
import { routeOf } from '../state/route';
import { runExportZip } from './run-export-zip';
import { ImportRunForm } from './ImportRunForm';
import { ParquetExportForm } from './ParquetExportForm';
import { columnsShownIn, headerLabel, RUN_LIST_FIGURES } from '../../../shared/metric-columns';

const STATUS_BADGE: Record<string, string> = {
  completed: 'ok',
  running: 'warning',
  aborted: 'missing',
  interrupted: 'missing',
  failed: 'missing',
};

/** The metric columns of the list, from the metric table (`shows.runsList`). */
const LIST_COLUMNS = columnsShownIn('runsList');

/** Runs per page of the list. */
export const RUNS_PAGE_SIZE = 50;

export function RunsView({ client }: { client: AppServices }) {
  const [page, setPage] = useState<{ items: RunListItem[]; total: number; skipped: SkippedRun[] } | null>(null);
  const [offset, setOffset] = useState(0);
  const [filter, setFilter] = useState('');
  const [search, setSearch] = useState('');
  const [detail, setDetail] = useState<RunDetail | null>(null);
  const { error, run: call } = useAction();
  const selection = useAppStore((state) => state.compareSelection);
  const routeId = useAppStore((state) => (state.route.view === 'runs' ? state.route.id : null));
  const { setCompareSelection, navigate } = useAppStore.getState();
  const jobPhase = useAppStore((state) => state.live.job?.phase);

  // The search runs in the database over every run, a moment after typing stops.
  useEffect(() => {
    const timer = setTimeout(() => {
      setSearch(filter.trim());
      setOffset(0);
    }, 250);
    return () => clearTimeout(timer);
  }, [filter]);
  const load = () => call(() => client.runs.page({ offset, limit: RUNS_PAGE_SIZE, search }), setPage);
  useEffect(() => void load(), [client, jobPhase, offset, search]);
  // #/runs/ID shows that run's details.
  useEffect(() => {
    if (routeId) void call(() => client.runs.get(routeId), setDetail);
    else setDetail(null);
  }, [client, routeId]);

  const toggle = (id: string) => setCompareSelection(selection.includes(id) ? selection.filter((item) => item !== id) : [...selection, id]);
  const exportRun = async (id: string) => {
    await call(
      () => client.runs.exportRun(id),
      (files) => downloadBytes(`${files.fileBase}.zip`, runExportZip(files), 'application/zip'),
    );
  };
  const remove = async (id: string) => {
    if (!window.confirm('Delete this run and all its requests?')) return;
    await call(() => client.runs.remove(id));
    if (routeId === id) navigate(routeOf('runs'));
    void load();
  };
  const runs = page?.items ?? null;
  const total = page?.total ?? 0;

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
            size={46}
          />
        </label>
        <button
          type="button"
          className="primary"
          disabled={selection.length < 2}
          onClick={() => navigate(routeOf('compare', null, { ids: selection.join(',') }))}
        >
          Compare {selection.length} selected
        </button>
      </div>
      <ImportRunForm
        client={client}
        onImported={(runId) => {
          void load();
          navigate(routeOf('runs', runId));
        }}
      />
      <ParquetExportForm client={client} />
      <ErrorBox error={error} />
      {detail && <RunDetailCard detail={detail} onClose={() => navigate(routeOf('runs'))} />}
      {total > 0 && (
        <div className="toolbar" role="navigation" aria-label="runs pages" data-testid="runs-pages">
          <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - RUNS_PAGE_SIZE))}>
            Newer
          </button>
          <span>
            {offset + 1}–{Math.min(offset + RUNS_PAGE_SIZE, total)} of {total} {search ? `matching “${search}”` : 'runs'}
          </span>
          <button type="button" disabled={offset + RUNS_PAGE_SIZE >= total} onClick={() => setOffset(offset + RUNS_PAGE_SIZE)}>
            Older
          </button>
        </div>
      )}
      {page?.skipped.map(({ runId, reason }) => (
        <p key={runId} className="error" role="status" data-testid="run-skipped">
          Run {runId} is left out: {reason}. Delete it to clear this note.{' '}
          <button type="button" onClick={() => void remove(runId)}>
            Delete
          </button>
        </p>
      ))}
      {runs === null && <RowsSkeleton label="Loading runs…" />}
      {runs && runs.length === 0 && (
        <p className="empty">
          {search ? `No run matches “${search}”.` : 'No runs yet. Start one from Home (“Run the demo”) or the Run view.'}
        </p>
      )}
      {runs && runs.length > 0 && (
        <TableScroll>
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
                {LIST_COLUMNS.map(({ key, metric, statistic }) => (
                  <th key={key}>{headerLabel(metric, statistic)}</th>
                ))}
                <th />
              </tr>
            </thead>
            <tbody>
              {runs.map((run) => (
                <RunRow
                  key={run.runId}
                  run={run}
                  selected={selection.includes(run.runId)}
                  onToggle={() => toggle(run.runId)}
                  onOpen={() => navigate(routeOf('runs', run.runId))}
                  onExport={() => exportRun(run.runId)}
                  onDelete={() => remove(run.runId)}
                />
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
    </section>
  );
}

/** One run opened: its summary and its manifest. */
function RunDetailCard({ detail, onClose }: { detail: RunDetail; onClose: () => void }) {
  return (
    <div className="card" data-testid="run-detail">
      <h2>
        Run {detail.item.runId.slice(0, 8)}{' '}
        <small>
          {detail.item.model} · {detail.item.workload} · {when(detail.item.startedAt)}
        </small>{' '}
        <button type="button" onClick={onClose}>
          Close
        </button>
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
  );
}

/** One stored run in the list, with its pick for comparison and its actions. */
function RunRow(props: {
  run: RunListItem;
  selected: boolean;
  onToggle: () => void;
  onOpen: () => void;
  onExport: () => void;
  onDelete: () => void;
}) {
  const { run, selected, onToggle, onOpen, onExport, onDelete } = props;
  return (
    <tr data-run={run.runId}>
      <td>
        <input type="checkbox" aria-label={`compare ${run.runId.slice(0, 8)}`} checked={selected} onChange={onToggle} />
      </td>
      <td>
        <button type="button" className="link" onClick={onOpen}>
          {when(run.startedAt)}
        </button>
      </td>
      <td>
        <span className={`badge badge-${STATUS_BADGE[run.status] ?? 'warning'}`} title={run.statusReason ?? ''}>
          {run.status}
        </span>
        {run.statusReason && <small> {run.statusReason}</small>}
        {run.importedFrom && (
          <span className="badge" title={`imported from ${run.importedFrom}`}>
            imported
          </span>
        )}
      </td>
      <td>{run.model ?? '—'}</td>
      <td>{run.quantization ?? '—'}</td>
      <td>{run.engine ?? '—'}</td>
      <td>{run.workload ?? run.kind}</td>
      <td>{run.requests}</td>
      {LIST_COLUMNS.map(({ key, definition }) => {
        const value = RUN_LIST_FIGURES[key](run);
        return <td key={key}>{definition.perRequest ? ms(value) : num(value, definition.unit, definition.digits)}</td>;
      })}
      <td>
        <button type="button" onClick={onExport}>
          Export
        </button>{' '}
        <button type="button" onClick={onDelete}>
          Delete
        </button>
      </td>
    </tr>
  );
}
