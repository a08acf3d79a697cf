import { useEffect } from 'react';
import type { AppServices } from '../../../shared/contract';
import { useAppStore } from '../state/store';

const STATUS_TEXT = { ok: 'OK', missing: 'Missing', warning: 'Warning' } as const;

export function HomeView({ client }: { client: AppServices }) {
  const { report, loading, error } = useAppStore((state) => state.doctor);
  const { setDoctorLoading, setDoctorReport, setDoctorError } = useAppStore.getState();

  const refresh = () => {
    setDoctorLoading();
    client.doctor.report().then(setDoctorReport, (reason: Error) => setDoctorError(reason.message));
  };
  useEffect(refresh, [client]);

  return (
    <section aria-labelledby="home-title">
      <h1 id="home-title">Infer Lab</h1>
      <p className="lead">Measure LLM inference on your own machine: serve a model, run workloads, compare runs.</p>
      <div className="toolbar">
        <h2>System check</h2>
        <button type="button" onClick={refresh} disabled={loading}>
          {loading ? 'Checking…' : 'Check again'}
        </button>
      </div>
      {error && <p role="alert" className="error">Could not run the check: {error}</p>}
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
                <td><span className={`badge badge-${check.status}`}>{STATUS_TEXT[check.status]}</span></td>
                <td>{check.label}</td>
                <td className="detail">{check.detail}</td>
                <td className="detail">{check.fix ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
