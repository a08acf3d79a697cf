import { useEffect } from 'react';
import type { AppServices } from '../../../shared/contract';
import { ErrorBox } from '../components/ErrorBox';
import { useAppStore } from '../state/store';
import { useAction } from '../hooks/use-action';
import { NoteLink, numberNotes, TableNotes } from '../components/TableNotes';
import { SetupCard } from './SetupCard';

const STATUS_TEXT = { ok: 'OK', missing: 'Missing', warning: 'Warning' } as const;

// A detail longer than this would stand a row several lines tall: it goes under the table, as every fix does
// (a fix is a command or a step to copy, easier to read in full width).
const LONG_DETAIL_CHARS = 120;
const isLong = (text: string) => text.length > LONG_DETAIL_CHARS;
const noteOf = (check: { label: string }, text: string) => `${check.label}: ${text}`;

export const DEMO_RUN = {
  workload: 'chat-short',
  model: 'demo:q8_0',
  endpoint: null,
  profileName: 'default',
  concurrency: 2,
  rate: null,
  requests: 24,
  durationS: null,
  warmup: 2,
  private: false,
};

export function HomeView({ client }: { client: AppServices }) {
  const { report, loading, error } = useAppStore((state) => state.doctor);
  const { setDoctorLoading, setDoctorReport, setDoctorError, startJob, setView } = useAppStore.getState();
  const { error: startError, run } = useAction();

  const refresh = () => {
    setDoctorLoading();
    client.doctor.report().then(setDoctorReport, (reason: Error) => setDoctorError(reason.message));
  };
  useEffect(refresh, [client]);

  const runDemo = async () => {
    await run(
      () => client.runs.start(DEMO_RUN),
      ({ jobId }) => {
        startJob(jobId);
        setView('run');
      },
    );
  };

  const checkNotes = numberNotes(
    (report?.checks ?? []).flatMap((check) => [
      isLong(check.detail) ? noteOf(check, check.detail) : null,
      check.fix ? noteOf(check, check.fix) : null,
    ]),
  );
  const engineOk = report?.checks.find((check) => check.id === 'engine')?.status === 'ok';
  const cpuEngineOnGpu = report?.checks.find((check) => check.id === 'gpu-engine' && check.status === 'warning') ?? null;
  const demoOk = report?.checks.find((check) => check.id === 'demo-models')?.status === 'ok';
  return (
    <section aria-labelledby="home-title">
      <h1 id="home-title">Infer Lab</h1>
      <p className="lead">Measure LLM inference on your own machine: serve a model, run workloads, compare runs.</p>
      {cpuEngineOnGpu && (
        <div role="alert" className="card warning-banner" data-testid="cpu-engine-on-gpu">
          <strong>Your runs measure the CPU, not the GPU.</strong> {cpuEngineOnGpu.detail}
          {cpuEngineOnGpu.fix && (
            <>
              <br />
              Fix: <code>{cpuEngineOnGpu.fix}</code>
            </>
          )}
        </div>
      )}
      <div className="card">
        <h2>First run</h2>
        {report && (!engineOk || !demoOk) ? (
          <p>
            Finish setup first: <strong>Set up</strong> below (or <code>./bin/inferlab setup</code> in the project folder).
          </p>
        ) : (
          <p>
            The demo serves the synthetic demo model (synthetic weights shaped to follow the word order of a short text: its output reads as
            stitched phrases, its compute is real), sends the <code>chat-short</code> workload at concurrency 2 and stores the run.
          </p>
        )}
        <button type="button" className="primary" onClick={runDemo} disabled={!report || !engineOk || !demoOk}>
          Run the demo
        </button>
        <ErrorBox error={startError} />
      </div>
      <SetupCard client={client} onDone={refresh} />
      <div className="toolbar">
        <h2>System check</h2>
        <button type="button" onClick={refresh} disabled={loading}>
          {loading ? 'Checking…' : 'Check again'}
        </button>
      </div>
      {error && (
        <p role="alert" className="error">
          Could not run the check: {error}
        </p>
      )}
      {report && (
        <table className="checks">
          <thead>
            <tr>
              <th scope="col">Status</th>
              <th scope="col">Item</th>
              <th scope="col">Detail</th>
              <th scope="col">Fix</th>
            </tr>
          </thead>
          <tbody>
            {report.checks.map((check) => (
              <tr key={check.id} data-check={check.id} data-status={check.status}>
                <td>
                  <span className={`badge badge-${check.status}`}>{STATUS_TEXT[check.status]}</span>
                </td>
                <td>{check.label}</td>
                <td className="detail">
                  {isLong(check.detail) ? (
                    <NoteLink prefix="checks" number={checkNotes.numberOf(noteOf(check, check.detail))!} />
                  ) : (
                    check.detail
                  )}
                </td>
                <td className="detail">
                  {check.fix ? <NoteLink prefix="checks" number={checkNotes.numberOf(noteOf(check, check.fix))!} /> : ''}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {report && <TableNotes prefix="checks" notes={checkNotes.notes} first={checkNotes.first} label="details and fixes" />}
    </section>
  );
}
