import { useEffect, useMemo, useState } from 'react';
import type { AppServices } from '../../../shared/contract';
import type { ProfileProblem, ServerProfile } from '../../../shared/contract/server';
import { ErrorBox } from '../components/ErrorBox';
import { ms } from '../components/format';
import { useAppStore } from '../state/store';
import { useAction } from '../hooks/use-action';

const FIELDS: {
  key: keyof ServerProfile;
  label: string;
  help: string;
  kind: 'number' | 'text' | 'select' | 'checkbox';
  options?: string[];
}[] = [
  { key: 'contextSize', label: 'Context (tokens)', help: 'Total context, shared by the slots (-c).', kind: 'number' },
  { key: 'parallelSlots', label: 'Parallel slots', help: 'Requests served at once; each gets context / slots (-np).', kind: 'number' },
  { key: 'batchSize', label: 'Batch (tokens)', help: 'Logical batch per step (-b).', kind: 'number' },
  { key: 'ubatchSize', label: 'Micro-batch (tokens)', help: 'Physical batch per compute call, at most the batch (-ub).', kind: 'number' },
  { key: 'gpuLayers', label: 'GPU layers', help: '999 = all layers on the GPU, 0 = CPU only (-ngl).', kind: 'number' },
  {
    key: 'flashAttention',
    label: 'Flash attention',
    help: 'A quantized V cache needs it on (-fa).',
    kind: 'select',
    options: ['auto', 'on', 'off'],
  },
  {
    key: 'cacheTypeK',
    label: 'K cache type',
    help: 'Lower precision saves VRAM (-ctk).',
    kind: 'select',
    options: ['f16', 'f32', 'bf16', 'q8_0', 'q4_0', 'q4_1', 'iq4_nl', 'q5_0', 'q5_1'],
  },
  {
    key: 'cacheTypeV',
    label: 'V cache type',
    help: 'Quantized types need flash attention on (-ctv).',
    kind: 'select',
    options: ['f16', 'f32', 'bf16', 'q8_0', 'q4_0', 'q4_1', 'iq4_nl', 'q5_0', 'q5_1'],
  },
  { key: 'threads', label: 'Threads', help: 'CPU threads for generation (-t).', kind: 'number' },
  {
    key: 'cacheRamMib',
    label: 'Prompt cache RAM (MiB)',
    help: '0 disables the host-RAM prompt cache (cold-cache runs need 0).',
    kind: 'number',
  },
  { key: 'cacheReuse', label: 'Cache reuse chunk', help: 'Minimum chunk for KV-shift reuse; 0 disables (--cache-reuse).', kind: 'number' },
  {
    key: 'allowContextOverTrained',
    label: 'Allow context beyond training',
    help: 'Permit a per-slot context above the model’s trained context.',
    kind: 'checkbox',
  },
];

const EMPTY_LOG: string[] = [];

export function ServerView({ client }: { client: AppServices }) {
  const [profile, setProfile] = useState<ServerProfile | null>(null);
  const [model, setModel] = useState('demo:q8_0');
  const [problems, setProblems] = useState<ProfileProblem[]>([]);
  const { error, run } = useAction();
  const servers = useAppStore((state) => state.servers);
  const current = useMemo(
    () =>
      Object.values(servers)
        .filter((server) => server.state !== 'stopped')
        .at(-1) ??
      Object.values(servers).at(-1) ??
      null,
    [servers],
  );

  useEffect(() => {
    void run(() => client.servers.defaultProfile(), setProfile);
    void run(
      () => client.servers.list(),
      (list) => list.forEach((snapshot) => useAppStore.getState().applyServer(snapshot)),
    );
  }, [client]);
  useEffect(() => {
    if (profile) void run(() => client.servers.validateProfile(profile, model), setProblems);
  }, [client, profile, model]);
  // New lines arrive as server.log events; what the server wrote before any event reached this page is read once.
  const currentId = current?.id ?? null;
  const logs = useAppStore((state) => (currentId ? state.serverLogs[currentId] : undefined)) ?? EMPTY_LOG;
  useEffect(() => {
    if (currentId && !useAppStore.getState().serverLogs[currentId])
      void client.servers.logs(currentId).then(
        (lines) => {
          if (!useAppStore.getState().serverLogs[currentId]) useAppStore.getState().appendServerLog(currentId, lines);
        },
        () => undefined,
      );
  }, [client, currentId]);

  if (!profile)
    return (
      <section>
        <h1>Server</h1>
        <ErrorBox error={error} />
      </section>
    );
  const problemFor = (key: keyof ServerProfile) => problems.filter((problem) => problem.field === key);
  const update = (key: keyof ServerProfile, value: unknown) => setProfile({ ...profile, [key]: value });
  const start = async () => {
    await run(
      () => client.servers.start(model, profile),
      (snapshot) => useAppStore.getState().applyServer(snapshot),
    );
  };

  return (
    <section aria-labelledby="server-title">
      <h1 id="server-title">Server</h1>
      <div className="toolbar">
        <label>
          Model <input value={model} onChange={(event) => setModel(event.target.value)} size={30} />
        </label>
        <button
          type="button"
          className="primary"
          onClick={start}
          disabled={problems.length > 0 || (current !== null && ['starting', 'ready'].includes(current.state))}
        >
          Start
        </button>
        {current && ['starting', 'ready'].includes(current.state) && (
          <button type="button" onClick={() => void run(() => client.servers.stop(current.id))}>
            Stop
          </button>
        )}
        {current && (
          <span
            className={`badge badge-${current.state === 'ready' ? 'ok' : current.state === 'failed' || current.state === 'crashed' ? 'missing' : 'warning'}`}
            data-testid="server-state"
          >
            {current.state}
          </span>
        )}
      </div>
      <ErrorBox error={error} />
      {current?.fault && (
        <div role="alert" className="error-box">
          <strong>{current.fault.code}</strong>: {current.fault.message}
          <br />
          Fix: {current.fault.hint}
        </div>
      )}
      <div className="columns">
        <form className="profile" onSubmit={(event) => event.preventDefault()}>
          <h2>
            Profile <small>(every option is passed explicitly)</small>
          </h2>
          {FIELDS.map((field) => (
            <label key={field.key} className={problemFor(field.key).length ? 'invalid' : ''}>
              <span>{field.label}</span>
              {field.kind === 'select' ? (
                <select value={String(profile[field.key])} onChange={(event) => update(field.key, event.target.value)}>
                  {field.options!.map((option) => (
                    <option key={option}>{option}</option>
                  ))}
                </select>
              ) : field.kind === 'checkbox' ? (
                <input
                  type="checkbox"
                  checked={Boolean(profile[field.key])}
                  onChange={(event) => update(field.key, event.target.checked)}
                />
              ) : (
                <input
                  type="number"
                  value={String(profile[field.key])}
                  onChange={(event) => update(field.key, event.target.value === '' ? NaN : Number(event.target.value))}
                />
              )}
              <small>{field.help}</small>
              {problemFor(field.key).map((problem) => (
                <small key={problem.message} className="error">
                  {problem.message}
                </small>
              ))}
            </label>
          ))}
        </form>
        <div>
          <h2>Effective configuration</h2>
          {current?.effectiveConfig ? (
            <table>
              <tbody>
                <tr>
                  <th>Build</th>
                  <td>{current.effectiveConfig.build ?? '—'}</td>
                </tr>
                <tr>
                  <th>Model type</th>
                  <td>{current.effectiveConfig.modelFileType ?? '—'}</td>
                </tr>
                <tr>
                  <th>Context total / per slot</th>
                  <td>
                    {current.effectiveConfig.contextSize ?? '—'} / {current.effectiveConfig.contextPerSlot ?? '—'} tokens
                  </td>
                </tr>
                <tr>
                  <th>Slots</th>
                  <td>{current.effectiveConfig.slots ?? '—'}</td>
                </tr>
                <tr>
                  <th>Layers on GPU</th>
                  <td>
                    {current.effectiveConfig.layersOffloaded
                      ? `${current.effectiveConfig.layersOffloaded.offloaded} / ${current.effectiveConfig.layersOffloaded.total}`
                      : 'none reported (CPU)'}
                  </td>
                </tr>
                {Object.entries(current.effectiveConfig.buffersMib).map(([name, size]) => (
                  <tr key={name}>
                    <th>{name} buffer</th>
                    <td>{size.toFixed(2)} MiB</td>
                  </tr>
                ))}
                <tr>
                  <th>Cold start: spawn → ready</th>
                  <td>{ms(current.coldStart?.spawnToReadyMs)}</td>
                </tr>
                <tr>
                  <th>Cold start: spawn → first token</th>
                  <td>{ms(current.coldStart?.spawnToFirstTokenMs)}</td>
                </tr>
              </tbody>
            </table>
          ) : (
            <p className="empty">Start a server to see what actually runs: the context, slots and buffers it reports.</p>
          )}
          <h2>Log</h2>
          <pre className="log" aria-label="server log">
            {logs.slice(-60).join('\n') || 'No server running.'}
          </pre>
        </div>
      </div>
    </section>
  );
}
