import { useEffect, useState } from 'react';
import type { AppServices, WorkloadInfo, WorkloadValidation } from '../../../shared/contract';
import { ErrorBox } from '../components/ErrorBox';
import { useAction } from '../hooks/use-action';
import { workloadRef } from '../components/workload-options';

export function WorkloadsView({ client }: { client: AppServices }) {
  const [list, setList] = useState<WorkloadInfo[]>([]);
  const [selected, setSelected] = useState<string | null>(null);
  const [text, setText] = useState('');
  const [validation, setValidation] = useState<WorkloadValidation | null>(null);
  const { error, run } = useAction();

  useEffect(() => {
    void run(
      () => client.workloads.list(),
      (workloads) => {
        setList(workloads);
        setSelected((current) => current ?? (workloads[0] ? workloadRef(workloads[0]) : null));
      },
    );
  }, [client]);
  useEffect(() => {
    if (selected)
      void run(
        () => client.workloads.read(selected),
        (workload) => setText(workload.text),
      );
  }, [client, selected]);
  useEffect(() => {
    if (!text) return;
    const timer = setTimeout(() => void run(() => client.workloads.validate(text), setValidation), 250);
    return () => clearTimeout(timer);
  }, [client, text]);

  return (
    <section aria-labelledby="workloads-title">
      <h1 id="workloads-title">Workloads</h1>
      <ErrorBox error={error} />
      <div className="columns sidebar">
        <ul className="list" aria-label="workload sets">
          {list.map((workload) => (
            <li key={workloadRef(workload)}>
              <button
                type="button"
                className={workloadRef(workload) === selected ? 'selected' : ''}
                title={workload.file}
                onClick={() => setSelected(workloadRef(workload))}
              >
                {workload.name}
              </button>
              <small>{workload.builtin ? workload.groups.join(', ') : `yours: ${workload.groups.join(', ') || 'not usable'}`}</small>
            </li>
          ))}
        </ul>
        <div>
          <p>{list.find((workload) => workloadRef(workload) === selected)?.description}</p>
          <textarea
            aria-label="workload definition"
            value={text}
            onChange={(event) => setText(event.target.value)}
            rows={24}
            spellCheck={false}
          />
          {validation &&
            (validation.ok ? (
              <>
                <p className="ok" data-testid="workload-valid">
                  Valid: {validation.items} written item(s) plus any generated ones.
                </p>
                {validation.tokens.length > 0 && (
                  <table data-testid="token-preview">
                    <thead>
                      <tr>
                        <th>Item</th>
                        <th>
                          Input tokens (
                          {validation.tokensExact ? 'exact, from the running server' : 'estimated; start a server for exact counts'})
                        </th>
                        <th>max_tokens</th>
                      </tr>
                    </thead>
                    <tbody>
                      {validation.tokens.map((item) => (
                        <tr key={item.id}>
                          <td>{item.id}</td>
                          <td>{item.inputTokens}</td>
                          <td>{item.maxTokens ?? 'default (128)'}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                )}
              </>
            ) : (
              <ul className="problems" data-testid="workload-problems">
                {validation.problems.map((problem, index) => (
                  <li key={index}>
                    {problem.line !== null ? `line ${problem.line}, column ${problem.column}: ` : ''}
                    {problem.field && <code>{problem.field}</code>} {problem.message}
                  </li>
                ))}
              </ul>
            ))}
          <p>
            <small>
              Edits are checked against the schema as you type. Built-in sets are read-only on disk; save a copy as a .yaml file and run it
              with <code>inferlab run --workload FILE</code>.
            </small>
          </p>
        </div>
      </div>
    </section>
  );
}
