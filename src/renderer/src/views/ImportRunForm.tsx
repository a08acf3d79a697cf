import { useState } from 'react';
import type { AppServices, ImportedRun } from '../../../shared/contract';
import { ErrorBox } from '../components/ErrorBox';
import { useAction } from '../hooks/use-action';

/**
 * Brings back a folder `inferlab export` wrote. The path is typed rather than picked: the
 * services read it only inside the results folders the config file allows, and say so otherwise.
 */
export function ImportRunForm({ client, onImported }: { client: AppServices; onImported: (runId: string) => void }) {
  const [folder, setFolder] = useState('');
  const [imported, setImported] = useState<ImportedRun | null>(null);
  const { error, busy, run } = useAction();
  const submit = async () => {
    setImported(null);
    await run(
      () => client.runs.importRun(folder.trim()),
      (result) => {
        setImported(result);
        onImported(result.runId);
      },
    );
  };
  return (
    <form
      className="toolbar"
      aria-label="import a run"
      onSubmit={(event) => {
        event.preventDefault();
        void submit();
      }}
    >
      <label>
        Exported run folder{' '}
        <input value={folder} onChange={(event) => setFolder(event.target.value)} placeholder="/path/to/run-export" size={40} />
      </label>
      <button type="submit" disabled={busy || folder.trim() === ''}>
        Import
      </button>
      {imported && (
        <span role="status">
          Imported run {imported.runId.slice(0, 8)} ({imported.requests} requests)
        </span>
      )}
      <ErrorBox error={error} />
    </form>
  );
}
