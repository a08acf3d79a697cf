import { useEffect, useState } from 'react';
import type { AppServices, JobProgress } from '../../../shared/contract';
import type { ModelScan } from '../../../shared/contract/models';
import { ErrorBox } from '../components/ErrorBox';
import { bytes } from '../components/format';

export function ModelsView({ client, onJob }: { client: AppServices; onJob: (listener: (progress: JobProgress) => void) => () => void }) {
  const [scan, setScan] = useState<ModelScan | null>(null);
  const [folder, setFolder] = useState('');
  const [error, setError] = useState<Error | null>(null);
  const [quantizing, setQuantizing] = useState<{ source: string; progress: JobProgress | null; jobId: string | null } | null>(null);

  const load = (folders?: string[]) => {
    setError(null);
    client.models.scan(folders).then(setScan, setError);
  };
  useEffect(() => load(), [client]);
  useEffect(
    () =>
      onJob((progress) => {
        setQuantizing((current) => (current ? { ...current, progress } : current));
        if (progress.finished) load();
      }),
    [onJob],
  );

  const quantize = async (source: string) => {
    setError(null);
    try {
      setQuantizing({ source, progress: null, jobId: null });
      const { jobId } = await client.models.quantize(source, ['Q4_0']);
      setQuantizing((current) => (current ? { ...current, jobId } : current));
    } catch (reason) {
      setQuantizing(null);
      setError(reason as Error);
    }
  };

  return (
    <section aria-labelledby="models-title">
      <h1 id="models-title">Models</h1>
      <form
        className="toolbar"
        onSubmit={(event) => {
          event.preventDefault();
          load(folder ? [folder] : undefined);
        }}
      >
        <label>
          Folder or file{' '}
          <input
            value={folder}
            onChange={(event) => setFolder(event.target.value)}
            placeholder="/path/to/models (empty: default folders)"
            size={40}
          />
        </label>
        <button type="submit">Scan</button>
      </form>
      <ErrorBox error={error} />
      {scan?.problems.map((problem) => (
        <p key={problem} className="error">
          {problem}
        </p>
      ))}
      {quantizing && (
        <div className="card" aria-live="polite">
          Quantizing {quantizing.source} to Q4_0:{' '}
          {quantizing.progress
            ? `${quantizing.progress.label} ${quantizing.progress.done}/${quantizing.progress.total ?? '?'} tensors`
            : 'starting'}
          {quantizing.progress?.total ? <progress max={quantizing.progress.total} value={quantizing.progress.done} /> : null}
          {quantizing.jobId && !quantizing.progress?.finished && (
            <button type="button" onClick={() => client.models.cancel(quantizing.jobId!).catch((reason: Error) => setError(reason))}>
              Cancel
            </button>
          )}
          {quantizing.progress?.error && <ErrorBox error={new Error(quantizing.progress.error.message)} />}
        </div>
      )}
      {scan && scan.models.length === 0 && (
        <p className="empty">
          No GGUF models found. Put models in ~/models or scan a folder; the demo models come from <code>./bin/inferlab setup</code>.
        </p>
      )}
      {scan && scan.models.length > 0 && (
        <table>
          <thead>
            <tr>
              <th>Model</th>
              <th>Architecture</th>
              <th>Parameters</th>
              <th>Quantization</th>
              <th>Size</th>
              <th>Context</th>
              <th>Status</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {scan.models.map((model) => (
              <tr key={model.path} data-valid={model.valid}>
                <td className="detail" title={model.path}>
                  {model.name}
                  {model.synthetic && <span className="badge badge-warning">synthetic</span>}
                  <br />
                  <small>{model.path}</small>
                </td>
                <td>{model.architecture ?? '—'}</td>
                <td>{model.parameterCount === null ? '—' : `${(model.parameterCount / 1e6).toFixed(1)} M`}</td>
                <td>{model.quantization ?? '—'}</td>
                <td>{bytes(model.sizeBytes)}</td>
                <td>{model.contextLength === null ? '—' : `${model.contextLength} tokens`}</td>
                <td>
                  {model.valid ? (
                    <span className="badge badge-ok">valid</span>
                  ) : (
                    <span className="badge badge-missing" title={model.invalidReason ?? ''}>
                      invalid: {model.invalidReason}
                    </span>
                  )}
                </td>
                <td>
                  {model.valid && model.quantization === 'F16' && (
                    <button type="button" onClick={() => quantize(model.path)}>
                      Quantize to Q4_0
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
