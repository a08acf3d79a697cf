import { useMemo, useState } from 'react';
import type { AppServices } from '../../../shared/contract';
import type { ExperimentResult } from '../../../shared/contract/experiments';
import { cooldownLine } from '../../../shared/cooldown-line';
import { stoppingLine } from '../../../shared/experiment-design';
import { decodesTokens, efficiencyCells, efficiencyNotes } from '../../../shared/energy-bandwidth-lines';
import { offloadWarnings } from '../../../shared/gpu-offload';
import { bunchedDeliveryLines } from '../../../shared/bunched-delivery-lines';
import { conditionColumns, headerLabel, metricCellText, type FigureFormat } from '../../../shared/metric-columns';
import { verdictUnit } from '../../../shared/verdict-units';
import { downloadFile } from '../components/download';
import { ErrorBox } from '../components/ErrorBox';
import { ms, num, pct, pctl } from '../components/format';
import { NoteLink, numberNotes, TableNotes } from '../components/TableNotes';
import { TableScroll } from '../components/TableScroll';
import { EXPERIMENT_KIND_VIEWS } from '../experiment-kinds/registry';
import { useAction } from '../hooks/use-action';
import { useAppStore } from '../state/store';
import { routeOf } from '../state/route';

/** Each gate the recommendation applied, and how each condition fared against it. */
function GatesTable({ result }: { result: ExperimentResult }) {
  const gates = result.recommendation.gates ?? [];
  if (gates.length === 0) return null;
  return (
    <TableScroll>
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
          {gates.map((gate) => (
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
    </TableScroll>
  );
}

const APP_FORMAT: FigureFormat = { ms, percentile: pctl, rate: (value, definition) => num(value, definition.unit, definition.digits) };

/** Where a result's notes are anchored: one result is shown at a time, and its id is unique. */
const notePrefixOf = (result: ExperimentResult) => `experiment-${result.experiment_id}`;

/** Why a condition is contaminated, as listed under the conditions table; null for a clean one. */
const contaminationNote = (condition: ExperimentResult['conditions'][number]) =>
  condition.contaminated ? `${condition.name}: ${condition.contamination_reason ?? 'no reason recorded'}` : null;

/** The conditions' notes, numbered from 1; the verdicts' notes follow on in the same card. */
const conditionNotes = (result: ExperimentResult) => numberNotes(result.conditions.map(contaminationNote));

/**
 * One row per condition: the shared figures, the kind's own columns, energy, bandwidth and
 * contamination. Why a condition is contaminated is a paragraph, so its cell points to it under the table.
 */
export function ConditionsTable({ result }: { result: ExperimentResult }) {
  const columns = EXPERIMENT_KIND_VIEWS[result.kind].columns;
  // From the metric table: `shows.conditions`, or `shows.embeddingConditions` for an embeddings experiment.
  const metricColumns = useMemo(() => conditionColumns('conditions', result.conditions), [result]);
  const decoded = result.conditions.some(decodesTokens);
  const notes = useMemo(() => conditionNotes(result), [result]);
  const notePrefix = notePrefixOf(result);
  return (
    <>
      <TableScroll>
        <table data-testid="conditions-table">
          <thead>
            <tr>
              <th>Condition</th>
              {metricColumns.map(({ metric, statistic }) => (
                <th key={`${metric} ${statistic}`}>{headerLabel(metric, statistic)}</th>
              ))}
              <th>Accepted</th>
              <th>Cache evidence</th>
              {columns && <columns.Headers />}
              {decoded && (
                <>
                  <th title="Mean over windows of each window's joules per output token, 95 % interval in brackets">
                    Energy / output token
                  </th>
                  <th title="Bytes a decode step reads × step rate, mean over windows, against the peak it was compared with">
                    Decode bandwidth
                  </th>
                </>
              )}
              <th>Contaminated</th>
            </tr>
          </thead>
          <tbody>
            {result.conditions.map((condition) => (
              <tr key={condition.name}>
                <th>{condition.name}</th>
                {metricColumns.map((column) => (
                  <td key={`${column.metric} ${column.statistic}`}>{metricCellText(condition, column, APP_FORMAT)}</td>
                ))}
                <td>{pct(condition.accepted_rate)}</td>
                <td className="wraps">
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
                {columns && <columns.Cells condition={condition} result={result} />}
                {decoded && (
                  <>
                    <td data-testid="condition-energy">{efficiencyCells(condition.efficiency).energy}</td>
                    <td data-testid="condition-bandwidth">{efficiencyCells(condition.efficiency).bandwidth}</td>
                  </>
                )}
                <td data-testid="condition-contaminated">
                  {condition.contaminated ? (
                    <>
                      <span className="error">yes</span> —{' '}
                      <NoteLink prefix={notePrefix} number={notes.numberOf(contaminationNote(condition))!} />
                    </>
                  ) : (
                    'no'
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
      <TableNotes prefix={notePrefix} notes={notes.notes} first={notes.first} label="why conditions are contaminated" />
    </>
  );
}

/** Lines under the table: where weights sat in host memory, and how energy and bandwidth were measured. */
function ConditionNotes({ result }: { result: ExperimentResult }) {
  const efficiency = useMemo(() => efficiencyNotes(result.conditions), [result]);
  const offload = useMemo(() => offloadWarnings(result.conditions), [result]);
  const bunched = useMemo(() => bunchedDeliveryLines(result.conditions), [result]);
  return (
    <>
      {bunched.length > 0 && (
        <p data-testid="bunched-delivery" className="error">
          {bunched.join(' ')}
        </p>
      )}
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
    </>
  );
}

/** Baseline against each other condition; a withheld verdict points to why, under the table. */
export function VerdictsTable({ result, firstNote }: { result: ExperimentResult; firstNote: number }) {
  const notes = useMemo(
    () =>
      numberNotes(
        result.verdicts.map((row) => (row.verdict === 'insufficient data' ? row.note : null)),
        firstNote,
      ),
    [result, firstNote],
  );
  const notePrefix = notePrefixOf(result);
  return (
    <>
      {EXPERIMENT_KIND_VIEWS[result.kind].verdicts !== false && (
        <h3>
          Verdicts{' '}
          <small>
            (t tests over windows, Holm-corrected to 95 % family-wise; “equivalent” means within the margin, “no significant difference”
            means neither shown)
          </small>
        </h3>
      )}
      {EXPERIMENT_KIND_VIEWS[result.kind].verdicts !== false && result.verdicts.length === 0 && (
        <p className="muted" data-testid="verdicts-none">
          None in this result: no two conditions measured windows to compare.
        </p>
      )}
      <TableScroll>
        <table data-testid="verdicts-table">
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
                      {' — '}
                      <NoteLink prefix={notePrefix} number={notes.numberOf(row.note)!} />
                    </>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
      <TableNotes prefix={notePrefix} notes={notes.notes} first={notes.first} label="why verdicts are withheld" />
    </>
  );
}

/** Record which condition was chosen and why, or download the report. */
function DecisionForm({ result, client, onDecided }: { result: ExperimentResult; client: AppServices; onDecided: () => void }) {
  const [chosen, setChosen] = useState(result.recommendation.choice ?? result.conditions[0]?.name ?? '');
  const [reason, setReason] = useState('');
  const decidedBy = useAppStore((state) => state.decidedBy);
  const setDecidedBy = useAppStore((state) => state.setDecidedBy);
  const { error, run } = useAction();
  return (
    <>
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
          <select aria-label="condition decided" value={chosen} onChange={(event) => setChosen(event.target.value)}>
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
    </>
  );
}

/** The conditions' first windows side by side in the Race view, each lane named by its condition (at most four lanes). */
function RaceConditions({ result }: { result: ExperimentResult }) {
  const lanes = result.conditions.flatMap((condition) => condition.run_ids.slice(0, 1)).slice(0, 4);
  // A race streams answers: embeddings have none to stream.
  if (lanes.length < 2 || !result.conditions.every(decodesTokens)) return null;
  return (
    <p>
      <button
        type="button"
        onClick={() => useAppStore.getState().navigate(routeOf('race', null, { lanes: lanes.join(',') }))}
        title="Play each condition's first measured request of its first window side by side, at the pace it was measured"
      >
        Race {result.conditions.length > 4 ? 'the first four conditions' : 'these conditions'}
      </button>
    </p>
  );
}

/** One experiment's result: the recommendation, the kind's own panel, the shared tables, and the decision. */
export function ResultView({ result, client, onDecided }: { result: ExperimentResult; client: AppServices; onDecided: () => void }) {
  const { title, Result } = EXPERIMENT_KIND_VIEWS[result.kind];
  // One numbering for the card: the conditions' notes, then the verdicts'.
  const firstVerdictNote = useMemo(() => conditionNotes(result).notes.length + 1, [result]);
  return (
    <div className="card" data-testid="experiment-result">
      <h2>
        {title} <small>{result.experiment_id.slice(0, 8)}</small>
      </h2>
      <p>
        <strong>Recommendation: {result.recommendation.choice ?? '—'}</strong> — {result.recommendation.reason}
      </p>
      {Result && <Result result={result} />}
      <RaceConditions result={result} />
      {result.stopping && <p data-testid="stopping-line">{stoppingLine(result.stopping)}</p>}
      {result.cooldown_waits && <p data-testid="cooldown-line">{cooldownLine(result.cooldown_waits)}</p>}
      {result.recommendation.excluded.map((item) => (
        <p key={item.name} className="error">
          {item.name} excluded: {item.reason}
        </p>
      ))}
      <GatesTable result={result} />
      <ConditionsTable result={result} />
      <ConditionNotes result={result} />
      <VerdictsTable result={result} firstNote={firstVerdictNote} />
      {/* Keyed by the experiment: another result opens at its own recommendation, not a choice begun on the last. */}
      <DecisionForm key={result.experiment_id} result={result} client={client} onDecided={onDecided} />
    </div>
  );
}
