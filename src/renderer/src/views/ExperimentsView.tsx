import { useEffect, useMemo, useState } from 'react';
import type { AppServices, DecisionRecord, ExperimentListItem, StartExperimentSpec } from '../../../shared/contract';
import type { ExperimentResult } from '../../../shared/contract/experiments';
import { ErrorBox } from '../components/ErrorBox';
import { bytes, ms, num, pct, pctl, when } from '../components/format';
import { DEMO_QUANT_SPEC, EXPERIMENT_DEFAULTS } from '../../../shared/experiment-defaults';
import { useAction } from '../hooks/use-action';
import { useAppStore } from '../state/store';
import { downloadFile } from '../components/download';
import { Chart } from '../components/Chart';
import { quantTradeoffOption } from './quant-tradeoff';
import { ExperimentForm, initialExperimentForm } from './ExperimentForm';
import { CapacityPanel } from './CapacityPanel';
import { verdictUnit } from '../../../shared/verdict-units';
import { routeOf } from '../state/route';
import { cooldownLine } from '../../../shared/cooldown-line';
import { efficiencyCells, efficiencyNotes } from '../../../shared/energy-bandwidth-lines';
import { offloadWarnings } from '../../../shared/gpu-offload';
import { EXPERIMENT_KIND_ORDER, EXPERIMENT_KIND_VIEWS } from '../experiment-kinds/registry';
import { METRIC_TABLE } from '../../../shared/metric-table';

const QUANT_DEMO: StartExperimentSpec = { ...DEMO_QUANT_SPEC, quants: [...DEMO_QUANT_SPEC.quants] };

/** A condition's greedy-output check: spec off is the reference itself. */
function greedyCell(equivalence: ExperimentResult['greedy_equivalence'], name: string): string {
  if (!equivalence) return '—';
  const setting = equivalence.settings.find((entry) => entry.name === name);
  if (!setting) return 'reference';
  return setting.equivalent ? 'identical' : `differs on ${setting.beyond_floor.length} item(s)`;
}

function ResultView({ result, client, onDecided }: { result: ExperimentResult; client: AppServices; onDecided: () => void }) {
  const [chosen, setChosen] = useState(result.recommendation.choice ?? result.conditions[0]?.name ?? '');
  const [reason, setReason] = useState('');
  const decidedBy = useAppStore((state) => state.decidedBy);
  const setDecidedBy = useAppStore((state) => state.setDecidedBy);
  const { error, run } = useAction();
  const quant = result.kind === 'quant';
  const sweep = result.kind === 'sweep';
  const spec = result.kind === 'spec';
  const equivalence = result.greedy_equivalence;
  const tradeoff = useMemo(() => (quant ? quantTradeoffOption(result) : null), [quant, result]);
  const efficiency = useMemo(() => efficiencyNotes(result.conditions), [result]);
  const offload = useMemo(() => offloadWarnings(result.conditions), [result]);
  const KindResult = EXPERIMENT_KIND_VIEWS[result.kind].Result;
  return (
    <div className="card" data-testid="experiment-result">
      <h2>
        {EXPERIMENT_KIND_VIEWS[result.kind].title} <small>{result.experiment_id.slice(0, 8)}</small>
      </h2>
      <p>
        <strong>Recommendation: {result.recommendation.choice ?? '—'}</strong> — {result.recommendation.reason}
      </p>
      {tradeoff && <Chart label="quant-tradeoff" option={tradeoff} height={300} />}
      {result.capacity && <CapacityPanel capacity={result.capacity} />}
      {KindResult && <KindResult result={result} />}
      {equivalence && (
        <p data-testid="greedy-equivalence">
          Greedy output over {equivalence.items} items: spec off agreed with itself on{' '}
          {equivalence.items - equivalence.floor_mismatches.length} (noise floor, exact match{' '}
          {pct(equivalence.noise_floor.exact_match_rate)}
          ).{' '}
          {equivalence.settings.map((setting) => (
            <span key={setting.name} className={setting.equivalent ? undefined : 'error'}>
              {setting.name}: {setting.equivalent ? 'identical' : `differs on ${setting.beyond_floor.join(', ')}`} (exact match{' '}
              {pct(setting.agreement.exact_match_rate)}).{' '}
            </span>
          ))}
          <br />
          <small>{equivalence.rule}</small>
        </p>
      )}
      {result.cooldown_waits && <p data-testid="cooldown-line">{cooldownLine(result.cooldown_waits)}</p>}
      {result.recommendation.excluded.map((item) => (
        <p key={item.name} className="error">
          {item.name} excluded: {item.reason}
        </p>
      ))}
      {(result.recommendation.gates ?? []).length > 0 && (
        <table data-testid="experiment-gates">
          <thead>
            <tr>
              <th>Gate</th>
              <th>Threshold</th>
              {result.conditions.map((condition) => (
                <th key={condition.name}>{condition.name}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {(result.recommendation.gates ?? []).map((gate) => (
              <tr key={gate.name}>
                <td>{gate.name}</td>
                <td>
                  <small>{gate.threshold}</small>
                </td>
                {result.conditions.map((condition) => {
                  const cell = gate.conditions.find((entry) => entry.name === condition.name);
                  return (
                    <td key={condition.name} className={cell?.status === 'fail' ? 'error' : undefined} title={cell?.detail}>
                      {cell?.status ?? '—'}
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <table>
        <thead>
          <tr>
            <th>Condition</th>
            <th>TTFT p50</th>
            <th>TTFT p95</th>
            <th>TPOT p50</th>
            <th>Output tok/s</th>
            <th>Accepted</th>
            <th>Cache evidence</th>
            {spec && (
              <>
                <th title="Accepted of drafted tokens, pooled over the windows">Draft acceptance</th>
                <th>Per request, min</th>
                <th>Greedy output</th>
              </>
            )}
            {sweep && (
              <>
                <th>Goodput</th>
                <th title="Good: succeeded, passed acceptance and met every SLO">Good requests</th>
                <th>Pareto</th>
              </>
            )}
            {quant && (
              <>
                <th>File</th>
                <th>Load</th>
                <th>VRAM peak</th>
                <th>Agreement</th>
                <th>KLD</th>
                <th>Same top token</th>
              </>
            )}
            <th title="Mean over windows of each window's joules per output token, 95 % interval in brackets">Energy / output token</th>
            <th title="Bytes a decode step reads × step rate, mean over windows, against the peak it was compared with">
              Decode bandwidth
            </th>
            <th>Contaminated</th>
          </tr>
        </thead>
        <tbody>
          {result.conditions.map((condition) => (
            <tr key={condition.name}>
              <th>{condition.name}</th>
              <td>{ms(condition.metrics.ttft_ms.p50)}</td>
              <td>{pctl(condition.metrics.ttft_ms, 'p95')}</td>
              <td>{ms(condition.metrics.tpot_ms.p50)}</td>
              <td>{num(condition.throughput.output_tokens_per_s, METRIC_TABLE.output_tokens_per_s.unit)}</td>
              <td>{pct(condition.accepted_rate)}</td>
              <td>
                {condition.cache_evidence ? (
                  <span className={condition.cache_evidence.contradicted > 0 ? 'error' : undefined} title={condition.cache_evidence.rule}>
                    {condition.cache_evidence.summary}
                  </span>
                ) : (
                  `${condition.evidence.cached_prompt_tokens} cached of ${condition.evidence.prompt_tokens} prompt tokens`
                )}
                {condition.cold_starts && (
                  <>
                    <br />
                    <small>
                      {condition.cold_starts.starts.length} fresh starts: spawn → ready p50{' '}
                      {ms(condition.cold_starts.spawn_to_ready_ms.p50)}
                    </small>
                  </>
                )}
              </td>
              {spec && (
                <>
                  <td>{condition.speculative ? pct(condition.speculative.acceptance_rate) : '— (no draft)'}</td>
                  <td>{condition.speculative ? pct(condition.speculative.acceptance_rate_per_request.min) : '—'}</td>
                  <td>{greedyCell(equivalence, condition.name)}</td>
                </>
              )}
              {sweep && (
                <>
                  <td>{num(condition.goodput_requests_per_s ?? null, 'req/s', 2)}</td>
                  <td className={condition.meets_slo === false ? 'error' : undefined}>
                    {condition.meets_slo == null ? '— (no SLO)' : pct(condition.goodput_fraction ?? null)}
                  </td>
                  <td>{condition.pareto ? 'yes' : 'no'}</td>
                </>
              )}
              {quant && (
                <>
                  <td>{bytes(condition.file_bytes ?? null)}</td>
                  <td>{ms(condition.load_ms ?? null)}</td>
                  <td>{condition.vram?.peak_mib == null ? '— (no GPU telemetry)' : `${condition.vram.peak_mib} MiB`}</td>
                  <td>{pct(condition.agreement_with_baseline ?? null)}</td>
                  <td>{num(condition.kld_mean ?? null, '', 6)}</td>
                  <td>{pct(condition.same_top_p ?? null)}</td>
                </>
              )}
              <td data-testid="condition-energy">{efficiencyCells(condition.efficiency).energy}</td>
              <td data-testid="condition-bandwidth">{efficiencyCells(condition.efficiency).bandwidth}</td>
              <td>{condition.contaminated ? <span className="error">yes: {condition.contamination_reason}</span> : 'no'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {offload.length > 0 && (
        <p data-testid="offload-warnings" className="error">
          {offload.map((line) => (
            <span key={line}>
              <strong>{line}</strong>
              <br />
            </span>
          ))}
        </p>
      )}
      {efficiency.length > 0 && (
        <p data-testid="efficiency-notes">
          <small>
            {efficiency.map((note) => (
              <span key={note}>
                {note}
                <br />
              </span>
            ))}
          </small>
        </p>
      )}
      {result.kind !== 'capacity' && (
        <h3>
          Verdicts{' '}
          <small>
            (t tests over windows, Holm-corrected to 95 % family-wise; “equivalent” means within the margin, “no significant difference”
            means neither shown)
          </small>
        </h3>
      )}
      <table>
        <tbody>
          {result.verdicts.map((row) => (
            <tr key={`${row.metric}-${row.b}`}>
              <td>{row.metric}</td>
              <td>
                {row.a} → {row.b}
              </td>
              <td>
                {num(row.difference, verdictUnit(row.metric), 2)}{' '}
                {row.relative_ci &&
                  row.confidence != null &&
                  `[${pct(row.relative_ci[0])}, ${pct(row.relative_ci[1])}] at ${(row.confidence * 100).toFixed(2)} %`}
              </td>
              <td className={`verdict verdict-${row.verdict.replace(/\s+/g, '-')}`} title={row.note ?? undefined}>
                {row.verdict === 'equivalent' ? `equivalent within ±${((row.equivalence_margin ?? 0) * 100).toFixed(0)} %` : row.verdict}
                {row.verdict === 'insufficient data' && row.note && (
                  <>
                    <br />
                    <small>{row.note}</small>
                  </>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <form
        className="toolbar wrap"
        onSubmit={(event) => {
          event.preventDefault();
          void run(
            () => client.experiments.decide(result.experiment_id, chosen, reason, decidedBy.trim() || 'unnamed'),
            () => {
              setReason('');
              onDecided();
            },
          );
        }}
      >
        <label>
          Decide{' '}
          <select value={chosen} onChange={(event) => setChosen(event.target.value)}>
            {result.conditions.map((condition) => (
              <option key={condition.name}>{condition.name}</option>
            ))}
          </select>
        </label>
        <label>
          Reason <input value={reason} onChange={(event) => setReason(event.target.value)} size={40} placeholder="why this one" />
        </label>
        <label>
          By{' '}
          <input
            aria-label="decided by"
            value={decidedBy}
            onChange={(event) => setDecidedBy(event.target.value)}
            size={14}
            placeholder="your name"
          />
        </label>
        <button type="submit" disabled={!reason.trim()}>
          Record decision
        </button>
        <button
          type="button"
          onClick={() =>
            void run(
              () => client.experiments.report(result.experiment_id),
              (report) => downloadFile(report.fileName, report.html, 'text/html'),
            )
          }
        >
          Download report
        </button>
      </form>
      <ErrorBox error={error} />
    </div>
  );
}

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
    const form = initialExperimentForm(kind, route.params.model ?? (kind === 'quant' ? 'demo:f16' : 'demo:q8_0'));
    // #/experiments?new=quant&files=NAME=PATH… (the Models view's "Compare these" after a pull) compares those files.
    const files = kind === 'quant' && route.params.files ? { source: 'files' as const, files: route.params.files } : {};
    return { ...form, ...files, profileName: defaultProfile };
  }, [route.params.new, route.params.model, route.params.files, defaultProfile]);
  // #/experiments/ID shows that experiment.
  useEffect(() => {
    if (route.id && route.id !== selected?.experiment_id) void run(() => client.experiments.get(route.id!), setSelected);
    if (!route.id) setSelected(null);
  }, [client, route.id]);
  const [jobId, setJobId] = useState<string | null>(null);
  const job = useAppStore((state) => (jobId ? (state.experimentJobs[jobId] ?? null) : null));
  const { error, run } = useAction();

  const load = () => {
    void run(() => client.experiments.list(), setList);
    void run(() => client.experiments.decisions(), setDecisions);
  };
  useEffect(load, [client]);
  useEffect(() => {
    if (job?.phase === 'finished' && job.result) {
      setSelected(job.result);
      navigate(routeOf('experiments', job.result.experiment_id));
      load();
    }
  }, [job?.phase]);

  const start = (spec: StartExperimentSpec) => {
    void run(
      () => client.experiments.start(spec),
      (started) => {
        // Its first events may have arrived already; only a job not yet heard of starts as "starting".
        if (!useAppStore.getState().experimentJobs[started.jobId])
          useAppStore
            .getState()
            .applyExperiment({ jobId: started.jobId, phase: 'running', message: 'starting', result: null, error: null });
        setJobId(started.jobId);
      },
    );
  };
  const running = job?.phase === 'running';
  return (
    <section aria-labelledby="experiments-title">
      <h1 id="experiments-title">Experiments and decisions</h1>
      <div className="toolbar">
        <button type="button" className="primary" disabled={running} onClick={() => start(QUANT_DEMO)}>
          Compare the demo quantizations
        </button>
        {running && job && (
          <button type="button" onClick={() => void run(() => client.experiments.cancel(job.jobId))}>
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
      {list === null ? (
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
                  <button type="button" className="link" onClick={() => navigate(routeOf('experiments', item.experimentId))}>
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
      )}
      <h2>Decisions</h2>
      <p data-testid="decision-name">
        <small>
          New decisions are recorded as <strong>{decidedBy.trim() || 'unnamed'}</strong>
          {decidedBy.trim() ? '' : ': give your name in Settings'}.
        </small>
      </p>
      {decisions.length === 0 ? (
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
      )}
    </section>
  );
}
