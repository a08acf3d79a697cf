import { useState } from 'react';
import type { AppServices } from '../../../shared/contract';
import type { HubModelMatch } from '../../../shared/contract/models';
import { ErrorBox } from '../components/ErrorBox';
import { useAction } from '../hooks/use-action';

/** A model name typed as people know it ("qwen3 8b") becomes the hf: repository to plan. */
export function HubSearch({ client, onPick }: { client: AppServices; onPick: (source: string) => void }) {
  const [words, setWords] = useState('');
  const [matches, setMatches] = useState<{ words: string; found: HubModelMatch[] } | null>(null);
  const { error, busy, run } = useAction();
  return (
    <>
      <form
        className="toolbar wrap"
        aria-label="search the hub"
        onSubmit={(event) => {
          event.preventDefault();
          const query = words.trim();
          void run(
            () => client.models.search(query),
            (found) => setMatches({ words: query, found }),
          );
        }}
      >
        <label>
          Find by name <input value={words} onChange={(event) => setWords(event.target.value)} placeholder="qwen3 8b" size={24} />
        </label>
        <button type="submit" disabled={busy || words.trim().length < 2}>
          {busy ? 'Searching…' : 'Search'}
        </button>
      </form>
      <ErrorBox error={error} />
      {matches && matches.found.length === 0 && <p className="empty">No repository with GGUF files matches “{matches.words}”.</p>}
      {matches && matches.found.length > 0 && (
        <ul aria-label="hub models" className="hub-matches">
          {matches.found.map((match) => (
            <li key={match.source}>
              <button type="button" className="link" onClick={() => onPick(match.source)}>
                {match.source}
              </button>{' '}
              <small>
                {match.downloads.toLocaleString('en-US')} downloads{match.updatedAt ? `, updated ${match.updatedAt.slice(0, 10)}` : ''}
              </small>
              {match.gated && (
                <span className="badge badge-warning" title="Accept its licence on the hub, then set HF_TOKEN where Infer Lab runs">
                  gated
                </span>
              )}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
