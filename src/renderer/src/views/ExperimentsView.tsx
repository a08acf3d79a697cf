import { useEffect, useMemo, useState } from 'react';
import type {
  AppServices,
  DecisionRecord,
  ExperimentListItem,
  ExperimentTaskProgress,
  StartExperimentSpec,
} from '../../../shared/contract';
import type { ExperimentResult } from '../../../shared/contract/experiments';
import { ErrorBox } from '../components/ErrorBox';
import { when } from '../components/format';
import { DEMO_QUANT_SPEC, EXPERIMENT_DEFAULTS } from '../../../shared/experiment-defaults';
import { useAction } from '../hooks/use-action';
import { taskOfKind, useAppStore } from '../state/store';
import { startingTask, taskIsOver } from '../../../shared/tasks';
import { ExperimentForm, initialExperimentForm } from './ExperimentForm';
import { ResultView } from './ExperimentResultView';
import { routeOf } from '../state/route';
import { EXPERIMENT_KIND_ORDER, EXPERIMENT_KIND_VIEWS } from '../experiment-kinds/registry';

const QUANT_DEMO: StartExperimentSpec = { ...DEMO_QUANT_SPEC, quants: [...DEMO_QUANT_SPEC.quants] };

export function ExperimentsView({ client }: { client: AppServices }) {
  const [list, setList] = useState<ExperimentListItem[] | null>(null);
  const [decisions, setDecisions] = useState<DecisionRecord[]>([]);
  const [selected, setSelected] = useState<ExperimentResult | null>(null);
  const route = useAppStore((state) => state.route);
  const navigate = useAppStore((state) => state.navigate);
  const defaultProfile = useAppStore((state) => state.defaultProfile);
  const decidedBy = useAppStore((state) => state.decidedBy);
  // #/experiments?new=quant&model=M (a model's "Compare quantizations") opens the form on that model.
  const preset = useMemo(() => {
    const kind = EXPERIMENT_KIND_ORDER.find((entry) => entry === route.params.new) ?? 'quant';
    const { form: kindForm } = EXPERIMENT_KIND_VIEWS[kind];
    const form = initialExperimentForm(kind, route.params.model ?? kindForm.presetModel ?? 'demo:q8_0');
    return { ...form, ...kindForm.fromRoute?.(route.params), profileName: defaultProfile };
  }, [route.params.new, route.params.model, route.params.files, defaultProfile]);
  // #/experiments/ID shows that experiment.
  useEffect(() => {
    if (route.id && route.id !== selected?.experiment_id) void run(() => client.experiments.get(route.id!), setSelected);
    if (!route.id) setSelected(null);
  }, [client, route.id]);
  const [jobId, setJobId] = useState<string | null>(null);
  const job = useAppStore((state) => taskOfKind(state.tasks, jobId, 'experiment'));
  const { error, run } = useAction();

  const load = () => {
    void run(() => client.experiments.list(), setList);
    void run(() => client.experiments.decisions(), setDecisions);
  };
  useEffect(load, [client]);
  useEffect(() => {
    const result = job?.phase === 'finished' ? job.detail.result : null;
    if (result) {
      setSelected(result);
      navigate(routeOf('experiments', result.experiment_id));
      load();
    }
  }, [job?.phase]);

  const start = (spec: StartExperimentSpec) => {
    void run(
      () => client.experiments.start(spec),
      (started) => {
        // Its first events may have arrived already; only a job not yet heard of starts as "starting".
        if (!useAppStore.getState().tasks[started.jobId])
          useAppStore.getState().applyTask(startingTask<ExperimentTaskProgress>(started.jobId, 'experiment', { result: null }));
        setJobId(started.jobId);
      },
    );
  };
  const running = job !== null && !taskIsOver(job.phase);
  return (
    <section aria-labelledby="experiments-title">
      <h1 id="experiments-title">Experiments and decisions</h1>
      <div className="toolbar">
        <button type="button" className="primary" disabled={running} onClick={() => start(QUANT_DEMO)}>
          Compare the demo quantizations
        </button>
        {running && job && (
          <button type="button" onClick={() => void run(() => client.tasks.cancel(job.jobId))}>
            Cancel
          </button>
        )}
      </div>
      <details open={Boolean(route.params.new)}>
        <summary>New experiment: any model, workload, design and gates</summary>
        <ExperimentForm client={client} initial={preset} running={running} onStart={start} />
      </details>
      <p>
        <small>
          Each condition runs in windows of requests in rotated order (default {EXPERIMENT_DEFAULTS.repeats} ×{' '}
          {EXPERIMENT_DEFAULTS.requestsPerWindow}); quantizations each get a fresh server; cold and warm are proven request by request with
          the server's own cached-token counts. A capacity search measures each load in looks of as many requests as its percentile needs
          and stops early once the outcome is certain.
        </small>
      </p>
      {job && (
        <p data-testid="experiment-phase" aria-live="polite">
          <span className={`badge badge-${job.phase === 'finished' ? 'ok' : job.phase === 'failed' ? 'missing' : 'warning'}`}>
            {job.phase}
          </span>{' '}
          {job.message}
        </p>
      )}
      {job?.error && <ErrorBox error={new Error(job.error.message)} />}
      <ErrorBox error={error} />
      {selected && <ResultView result={selected} client={client} onDecided={load} />}
      <h2>Experiments</h2>
      <ExperimentsTable list={list} onOpen={(id) => navigate(routeOf('experiments', id))} />
      <h2>Decisions</h2>
      <p data-testid="decision-name">
        <small>
          New decisions are recorded as <strong>{decidedBy.trim() || 'unnamed'}</strong>
          {decidedBy.trim() ? '' : ': give your name in Settings'}.
        </small>
      </p>
      <DecisionsTable decisions={decisions} />
    </section>
  );
}

/** The stored experiments, newest first, each opening its result. */
function ExperimentsTable({ list, onOpen }: { list: ExperimentListItem[] | null; onOpen: (experimentId: string) => void }) {
  return list === null ? (
    <p className="skeleton" aria-busy="true">
      Loading experiments…
    </p>
  ) : list.length === 0 ? (
    <p className="empty">No experiments yet: start one above.</p>
  ) : (
    <table data-testid="experiments-table">
      <thead>
        <tr>
          <th>Started</th>
          <th>Kind</th>
          <th>Status</th>
          <th>Outcome</th>
        </tr>
      </thead>
      <tbody>
        {list.map((item) => (
          <tr key={item.experimentId}>
            <td>
              <button type="button" className="link" onClick={() => onOpen(item.experimentId)}>
                {when(item.createdAt)}
              </button>
            </td>
            <td>{item.kind}</td>
            <td>{item.status}</td>
            <td>
              <small>{item.recommendation ?? '—'}</small>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The recorded decisions: who chose what, why, and on which runs. */
function DecisionsTable({ decisions }: { decisions: DecisionRecord[] }) {
  return decisions.length === 0 ? (
    <p className="empty">No decisions recorded. Open an experiment, pick a condition and give the reason.</p>
  ) : (
    <table data-testid="decisions-table">
      <thead>
        <tr>
          <th>When</th>
          <th>Who</th>
          <th>Chosen</th>
          <th>Reason</th>
          <th>Runs</th>
        </tr>
      </thead>
      <tbody>
        {decisions.map((decision) => (
          <tr key={decision.decision_id}>
            <td>{when(decision.decided_at)}</td>
            <td>{decision.decided_by}</td>
            <td>{decision.chosen}</td>
            <td>{decision.reason}</td>
            <td>
              <small>{decision.chosen_run_ids.map((id) => id.slice(0, 8)).join(', ')}</small>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
