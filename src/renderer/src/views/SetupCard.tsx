import { useEffect, useState } from 'react';
import type { AppServices, EngineSetupOptions } from '../../../shared/contract';
import { ErrorBox } from '../components/ErrorBox';
import { useAction } from '../hooks/use-action';
import { taskOfKind, useAppStore } from '../state/store';
import { taskIsOver } from '../../../shared/tasks';

type Backend = NonNullable<EngineSetupOptions['backend']>;

/**
 * `inferlab setup` from the window: finds or builds llama.cpp for a backend (a cached build is
 * reused in seconds; a first build on the prebuilt libraries takes about three minutes on two
 * cores) and makes the demo models, with progress and a Cancel that kills the build.
 */
export function SetupCard({ client, onDone }: { client: AppServices; onDone: () => void }) {
  const [backend, setBackend] = useState<Backend | 'auto'>('auto');
  const [force, setForce] = useState(false);
  const [fromSource, setFromSource] = useState(false);
  const [jobId, setJobId] = useState<string | null>(null);
  const progress = useAppStore((state) => taskOfKind(state.tasks, jobId, 'setup'));
  const { error, run } = useAction();
  const over = progress !== null && taskIsOver(progress.phase);
  const running = jobId !== null && !over;
  useEffect(() => {
    if (over) onDone();
  }, [over]);

  return (
    <div className="card" data-testid="setup">
      <h2>Engine setup</h2>
      <div className="toolbar wrap">
        <label>
          Backend{' '}
          <select aria-label="setup backend" value={backend} onChange={(event) => setBackend(event.target.value as Backend | 'auto')}>
            <option value="auto">detect (CUDA with an NVIDIA driver and CUDA runtime, else a Vulkan GPU, else CPU; Metal on macOS)</option>
            <option value="cpu">CPU</option>
            <option value="cuda">CUDA</option>
            <option value="vulkan">Vulkan</option>
            <option value="metal">Metal</option>
          </select>
        </label>
        <label>
          <input type="checkbox" checked={force} onChange={(event) => setForce(event.target.checked)} /> Rebuild even when cached
        </label>
        <label title="Skip the prebuilt llama.cpp libraries and compile all of llama.cpp (CUDA then needs nvcc)">
          <input type="checkbox" checked={fromSource} onChange={(event) => setFromSource(event.target.checked)} /> Build all of llama.cpp
          from source
        </label>
        <button
          type="button"
          disabled={running}
          onClick={() =>
            void run(
              () =>
                client.engine.setup({
                  ...(backend === 'auto' ? {} : { backend }),
                  ...(force ? { force } : {}),
                  ...(fromSource ? { fromSource } : {}),
                }),
              (started) => setJobId(started.jobId),
            )
          }
        >
          Set up
        </button>
        {running && (
          <button type="button" onClick={() => void run(() => client.tasks.cancel(jobId!))}>
            Cancel
          </button>
        )}
      </div>
      {jobId && (
        <p role="status" data-testid="setup-progress">
          {!progress ? (
            'starting'
          ) : progress.phase === 'finished' ? (
            // A finished setup ends on its last line: what it found or built.
            <>
              <strong>Ready.</strong> {progress.message}
            </>
          ) : over ? (
            <strong>{progress.phase === 'cancelled' ? 'Cancelled.' : 'Setup failed.'}</strong>
          ) : (
            <>
              {progress.message}
              {progress.total ? (
                <>
                  {' '}
                  <progress max={progress.total} value={progress.done} /> {progress.done}/{progress.total}
                </>
              ) : null}
            </>
          )}
        </p>
      )}
      {progress?.error && <ErrorBox error={new Error(progress.error.message)} />}
      <ErrorBox error={error} />
    </div>
  );
}
