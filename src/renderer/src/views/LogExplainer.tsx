import { useState } from 'react';
import type { AppServices } from '../../../shared/contract';
import type { LogExplanation } from '../../../shared/contract/server';
import { logExplanationRows } from '../../../shared/log-explanation-rows';
import { ErrorBox } from '../components/ErrorBox';
import { useAction } from '../hooks/use-action';

/** The fact rows with sentence-case names, a used device marked with a dash. */
function factRows(explanation: LogExplanation): [string, string][] {
  return logExplanationRows(explanation, (used) => (used === true ? ' — used' : used === false ? ' — unused' : '')).map(([name, value]) => [
    name[0]!.toUpperCase() + name.slice(1),
    value,
  ]);
}

/** Paste or drop a llama-server or llama.cpp log from anywhere (a bug report, another box) and read what it says. */
export function LogExplainer({ client }: { client: AppServices }) {
  const [text, setText] = useState('');
  const [explanation, setExplanation] = useState<LogExplanation | null>(null);
  const { error, run } = useAction();
  const onDrop = (event: React.DragEvent<HTMLTextAreaElement>) => {
    const file = event.dataTransfer.files[0];
    if (!file) return;
    event.preventDefault();
    void file.text().then(setText);
  };
  return (
    <div className="card" data-testid="log-explainer">
      <h2>Explain a log</h2>
      <p>
        <small>
          Paste or drop a llama-server or llama.cpp log from any build (or <code>inferlab server explain LOG</code>): what ran where, and
          what costs performance.
        </small>
      </p>
      <textarea
        aria-label="log to explain"
        rows={6}
        value={text}
        onChange={(event) => setText(event.target.value)}
        onDrop={onDrop}
        placeholder="load_tensors: offloaded 33/33 layers to GPU …"
      />
      <div className="toolbar">
        <button type="button" disabled={text.trim() === ''} onClick={() => void run(() => client.servers.explainLog(text), setExplanation)}>
          Explain
        </button>
      </div>
      <ErrorBox error={error} />
      {explanation && (
        <>
          <table data-testid="log-facts">
            <tbody>
              {factRows(explanation).map(([name, value]) => (
                <tr key={name}>
                  <th scope="row">{name}</th>
                  <td>{value}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {explanation.fault && (
            <p className="error">
              Failed ({explanation.fault.code}): {explanation.fault.hint}
            </p>
          )}
          {explanation.missing.length > 0 && (
            <div data-testid="log-missing">
              <p>Not in this text (a part of a log is read for what it holds):</p>
              <ul>
                {explanation.missing.map((item) => (
                  <li key={item}>{item}</li>
                ))}
              </ul>
            </div>
          )}
          {explanation.warnings.length === 0 ? (
            <p data-testid="log-warnings">No warnings.</p>
          ) : (
            <ul data-testid="log-warnings">
              {explanation.warnings.map((warning) => (
                <li key={warning} className="error">
                  {warning}
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </div>
  );
}
