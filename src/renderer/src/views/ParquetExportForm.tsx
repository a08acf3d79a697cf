import { useState } from 'react';
import type { AppServices, ParquetExport } from '../../../shared/contract';
import { ErrorBox } from '../components/ErrorBox';
import { useAction } from '../hooks/use-action';

/**
 * Writes every stored run and experiment as Parquet tables for pandas, polars or DuckDB. The
 * files stay on the machine the service runs on (the GPU box, for `inferlab serve`), in a new
 * folder under the results folder unless one inside the allowed results folders is typed.
 */
export function ParquetExportForm({ client }: { client: AppServices }) {
  const [folder, setFolder] = useState('');
  const [written, setWritten] = useState<ParquetExport | null>(null);
  const { error, busy, run } = useAction();
  const submit = async () => {
    setWritten(null);
    await run(() => client.runs.exportParquet(folder.trim() ? { folder: folder.trim() } : {}), setWritten);
  };
  return (
    <form
      className="toolbar wrap"
      aria-label="export as parquet"
      onSubmit={(event) => {
        event.preventDefault();
        void submit();
      }}
    >
      <label>
        Parquet folder{' '}
        <input
          value={folder}
          onChange={(event) => setFolder(event.target.value)}
          placeholder="a new folder in the results folder"
          size={40}
        />
      </label>
      <button type="submit" disabled={busy}>
        Export all as Parquet
      </button>
      {written && (
        <span role="status" title={written.tables.map((table) => table.file).join('\n')}>
          Wrote {written.tables.map((table) => `${table.name} ${table.rows}`).join(', ')} to {written.folder}
        </span>
      )}
      <ErrorBox error={error} />
    </form>
  );
}
