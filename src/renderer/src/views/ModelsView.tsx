import { useEffect, useState } from 'react';
import type { AppServices } from '../../../shared/contract';
import { ErrorCode } from '../../../shared/errors';
import type { ModelEntry, ModelScan, QuantTypeInfo } from '../../../shared/contract/models';
import { forgetModelLibrary } from '../components/ModelField';
import { RowsSkeleton } from '../components/Skeleton';
import { TableScroll } from '../components/TableScroll';
import { routeOf } from '../state/route';
import { ErrorBox } from '../components/ErrorBox';
import { bytes } from '../components/format';
import { useAction } from '../hooks/use-action';
import { taskOfKind, useAppStore } from '../state/store';
import { taskIsOver } from '../../../shared/tasks';
import { DEFAULT_QUANT_TYPE, OFFERED_QUANT_TYPES } from '../../../shared/quant-types';
import { ModelPlanPanel } from './ModelPlanPanel';

/** llama-quantize makes good quantizations only from 16- and 32-bit weights; requantizing loses quality twice. */
const quantizable = (model: ModelEntry) => ['F16', 'BF16', 'F32'].includes(model.quantization ?? '');

/** The engine's quantization types; null where no engine is set up yet, and Quantize says what to set up. */
async function engineQuantTypes(client: AppServices): Promise<QuantTypeInfo[] | null> {
  try {
    return await client.models.quantTypes();
  } catch (error) {
    if ((error as { code?: unknown }).code === ErrorCode.EngineMissing) return null;
    throw error;
  }
}

export function ModelsView({ client }: { client: AppServices }) {
  const [scan, setScan] = useState<ModelScan | null>(null);
  const [folder, setFolder] = useState('');
  const { error, run } = useAction();
  const [quantType, setQuantType] = useState<string>(DEFAULT_QUANT_TYPE);
  // The engine's own list; the common types stand in until it answers (or when there is no engine yet).
  const [quantTypes, setQuantTypes] = useState<QuantTypeInfo[]>(() =>
    OFFERED_QUANT_TYPES.map((type) => ({ type, description: '', needsImportanceMatrix: false })),
  );
  const { error: quantTypesError, run: readQuantTypes } = useAction();
  useEffect(
    () =>
      void readQuantTypes(
        () => engineQuantTypes(client),
        (types) => types && setQuantTypes(types),
      ),
    [client, readQuantTypes],
  );
  const [quantizing, setQuantizing] = useState<{ source: string; type: string; jobId: string | null } | null>(null);
  const progress = useAppStore((state) => taskOfKind(state.tasks, quantizing?.jobId, 'quantize'));
  const over = progress !== null && taskIsOver(progress.phase);

  const load = (folders?: string[]) => {
    setScan(null);
    forgetModelLibrary(client);
    void run(() => client.models.scan(folders), setScan);
  };
  useEffect(() => load(), [client]);
  // A finished quantization adds files: scan again.
  useEffect(() => {
    if (over) load();
  }, [over]);

  const quantize = async (source: string) => {
    setQuantizing({ source, type: quantType, jobId: null });
    const started = await run(
      () => client.models.quantize(source, [quantType]),
      ({ jobId }) => setQuantizing((current) => (current ? { ...current, jobId } : current)),
    );
    if (!started) setQuantizing(null);
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
        <label>
          Quantize to{' '}
          <select aria-label="quantization type" value={quantType} onChange={(event) => setQuantType(event.target.value)}>
            {quantTypes.map((entry) => (
              <option
                key={entry.type}
                value={entry.type}
                disabled={entry.needsImportanceMatrix}
                title={entry.needsImportanceMatrix ? 'needs an importance matrix, which Infer Lab does not compute' : entry.description}
              >
                {entry.type}
                {entry.description && ` — ${entry.description}`}
                {entry.needsImportanceMatrix && ' (needs an importance matrix)'}
              </option>
            ))}
          </select>
        </label>
      </form>
      <ErrorBox error={error ?? quantTypesError} />
      {scan?.problems.map((problem) => (
        <p key={problem} className="error">
          {problem}
        </p>
      ))}
      {quantizing && (
        <div className="card" aria-live="polite">
          Quantizing {quantizing.source} to {quantizing.type}:{' '}
          {!progress
            ? 'starting'
            : progress.phase === 'failed'
              ? 'failed'
              : progress.phase === 'cancelled'
                ? 'cancelled (the partial file was removed)'
                : progress.phase === 'finished'
                  ? 'done: the new file is in the list below'
                  : `${progress.message} ${progress.done}/${progress.total ?? '?'} tensors`}
          {progress?.total && !over ? <progress max={progress.total} value={progress.done} /> : null}
          {quantizing.jobId && !over && (
            <button type="button" onClick={() => void run(() => client.tasks.cancel(quantizing.jobId!))}>
              Cancel
            </button>
          )}
          {progress?.error && <ErrorBox error={new Error(progress.error.message)} />}
        </div>
      )}
      {!scan && !error && <RowsSkeleton label="Scanning the model folders…" />}
      {scan && scan.models.length === 0 && (
        <p className="empty">
          No GGUF models found. Put models in ~/models or scan a folder; the demo models come from <code>./bin/inferlab setup</code>.
        </p>
      )}
      {scan && scan.models.length > 0 && (
        <TableScroll>
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
                <ModelRow key={model.path} model={model} quantType={quantType} onQuantize={() => quantize(model.path)} />
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      <ModelPlanPanel client={client} />
    </section>
  );
}

/** One model file: what it is, whether it loads, and what can be done with it. */
function ModelRow({ model, quantType, onQuantize }: { model: ModelEntry; quantType: string; onQuantize: () => void }) {
  const navigate = useAppStore((state) => state.navigate);
  return (
    <tr data-valid={model.valid}>
      <td className="detail wraps" title={model.path}>
        {model.name}
        {model.synthetic && <span className="badge badge-warning">synthetic</span>}
        <br />
        <small className="path-tail">
          <bdi>{model.path}</bdi>
        </small>
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
      <td className="model-actions">
        {model.valid && (
          <>
            <button type="button" onClick={() => navigate(routeOf('server', null, { model: model.path }))}>
              Serve
            </button>
            <button type="button" onClick={() => navigate(routeOf('run', null, { model: model.path }))}>
              Run
            </button>
            {quantizable(model) && (
              <>
                <button type="button" onClick={onQuantize}>
                  Quantize to {quantType}
                </button>
                <button type="button" onClick={() => navigate(routeOf('experiments', null, { new: 'quant', model: model.path }))}>
                  Compare quantizations
                </button>
              </>
            )}
          </>
        )}
      </td>
    </tr>
  );
}
