import { useEffect, useRef, useState } from 'react';
import type { AppServices } from '../../../shared/contract';
import type { PulledModel } from '../../../shared/contract/models';
import { pullProgressLine } from '../../../shared/pull-progress';
import { ErrorBox } from '../components/ErrorBox';
import { bytes } from '../components/format';
import { useAction } from '../hooks/use-action';
import { routeOf } from '../state/route';
import { taskOfKind, useAppStore } from '../state/store';
import { taskIsOver } from '../../../shared/tasks';

/** A pull the Models view started: the repository, the quantizations asked for, and its job once it runs. */
export interface StartedPull {
  source: string;
  labels: string[];
  jobId: string;
}

/**
 * The quant form's files, the largest first as the baseline (the most precise of those pulled,
 * as `experiment quant --from … --quants all` orders them); a split model by its first part,
 * which llama-server loads the rest from.
 */
export function quantFilesText(pulled: readonly PulledModel[]): string {
  return largestFirst(pulled)
    .map((model) => `${model.label}=${model.files[0]}`)
    .join('\n');
}

const largestFirst = (pulled: readonly PulledModel[]) => [...pulled].sort((a, b) => b.sizeBytes - a.sizeBytes);

/** Where a pull stands (bytes, rate, time left), its Cancel, then what it left in the cache and "Compare these". */
export function PullProgressCard({ client, pull }: { client: AppServices; pull: StartedPull }) {
  const progress = useAppStore((state) => taskOfKind(state.tasks, pull.jobId, 'pull'));
  const over = progress !== null && taskIsOver(progress.phase);
  const navigate = useAppStore((state) => state.navigate);
  // The rate counts from the first report: bytes already in the cache or kept from an interrupted pull are not speed.
  const first = useRef<{ jobId: string; at: number; done: number } | null>(null);
  if (progress && !over && first.current?.jobId !== pull.jobId) first.current = { jobId: pull.jobId, at: Date.now(), done: progress.done };
  const [pulled, setPulled] = useState<PulledModel[] | null>(null);
  const { error, run } = useAction();
  const succeeded = progress?.phase === 'finished';
  useEffect(() => {
    setPulled(null);
    if (succeeded)
      void run(
        () => client.models.cached(pull.source, pull.labels),
        (found) => setPulled(largestFirst(found)),
      );
  }, [succeeded, pull.jobId]);

  const live =
    progress && !over && progress.total
      ? pullProgressLine({
          file: progress.message,
          fileBytesDone: 0,
          fileBytesTotal: 0,
          bytesDone: progress.done,
          bytesTotal: progress.total,
          downloadedBytes: progress.done - (first.current?.done ?? progress.done),
          elapsedMs: Date.now() - (first.current?.at ?? Date.now()),
        })
      : null;
  return (
    <div className="card" aria-label="pull" aria-live="polite">
      <p>
        Pulling {pull.labels.join(', ')} of {pull.source}:{' '}
        {!progress
          ? 'starting'
          : !over
            ? live
            : progress.phase === 'failed'
              ? 'failed'
              : progress.phase === 'cancelled'
                ? 'cancelled (the file being downloaded was deleted)'
                : 'done, each file checked against the hub’s SHA-256'}
      </p>
      {progress && !over && progress.total ? <progress max={progress.total} value={progress.done} /> : null}
      {progress && !over && (
        <button type="button" onClick={() => void run(() => client.tasks.cancel(pull.jobId))}>
          Cancel pull
        </button>
      )}
      {progress?.error && <ErrorBox error={new Error(progress.error.message)} />}
      <ErrorBox error={error} />
      {pulled && (
        <>
          <table aria-label="pulled models">
            <thead>
              <tr>
                <th>quant</th>
                <th>size</th>
                <th>file in the Hugging Face cache</th>
              </tr>
            </thead>
            <tbody>
              {pulled.map((model) => (
                <tr key={model.label}>
                  <td>{model.label}</td>
                  <td>{bytes(model.sizeBytes)}</td>
                  <td className="detail">
                    {model.files[0]}
                    {model.files.length > 1 && ` (+${model.files.length - 1} parts)`}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {pulled.length >= 2 ? (
            <button type="button" onClick={() => navigate(routeOf('experiments', null, { new: 'quant', files: quantFilesText(pulled) }))}>
              Compare these
            </button>
          ) : (
            <p className="empty">A comparison needs two quantizations: pull another to compare them.</p>
          )}
        </>
      )}
    </div>
  );
}
