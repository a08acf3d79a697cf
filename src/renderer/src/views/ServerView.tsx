import { useEffect, useMemo, useState } from 'react';
import type { AppServices } from '../../../shared/contract';
import type { ProfileProblem, ServerProfile } from '../../../shared/contract/server';
import { ErrorBox } from '../components/ErrorBox';
import { ms } from '../components/format';
import { useAppStore } from '../state/store';
import { useAction } from '../hooks/use-action';
import { ModelField } from '../components/ModelField';
import { LogExplainer } from './LogExplainer';
import { KV_CACHE_TYPES, PROFILE_FIELD_HELP } from '../../../shared/profile-fields';

/** The editor's controls; labels and help come from the one table of profile fields. */
/** A text control left empty holds `empty`: no draft model, every GPU. */
const CONTROLS: {
  key: keyof typeof PROFILE_FIELD_HELP;
  kind: 'number' | 'text' | 'select' | 'checkbox';
  options?: readonly string[];
  empty?: { value: string | null; shown: string };
}[] = [
  { key: 'contextSize', kind: 'number' },
  { key: 'parallelSlots', kind: 'number' },
  { key: 'batchSize', kind: 'number' },
  { key: 'ubatchSize', kind: 'number' },
  { key: 'gpuLayers', kind: 'number' },
  { key: 'flashAttention', kind: 'select', options: ['auto', 'on', 'off'] },
  { key: 'cacheTypeK', kind: 'select', options: KV_CACHE_TYPES },
  { key: 'cacheTypeV', kind: 'select', options: KV_CACHE_TYPES },
  { key: 'threads', kind: 'number' },
  { key: 'cacheRamMib', kind: 'number' },
  { key: 'cacheReuse', kind: 'number' },
  { key: 'allowContextOverTrained', kind: 'checkbox' },
  { key: 'draftModel', kind: 'text', empty: { value: null, shown: 'none' } },
  { key: 'draftMax', kind: 'number' },
  { key: 'draftMin', kind: 'number' },
  { key: 'draftPMin', kind: 'number' },
  { key: 'draftGpuLayers', kind: 'number' },
  { key: 'gpuDevices', kind: 'text', empty: { value: 'all', shown: 'all' } },
];
const FIELDS = CONTROLS.map((control) => ({ ...control, ...PROFILE_FIELD_HELP[control.key] }));

const EMPTY_LOG: string[] = [];

export function ServerView({ client }: { client: AppServices }) {
  const [profile, setProfile] = useState<ServerProfile | null>(null);
  const [saved, setSaved] = useState<ServerProfile[]>([]);
  const [profileName, setProfileName] = useState('');
  const routeModel = useAppStore((state) => (state.route.view === 'server' ? (state.route.params.model ?? null) : null));
  const defaultProfile = useAppStore((state) => state.defaultProfile);
  const [model, setModel] = useState(routeModel ?? 'demo:q8_0');
  const [engine, setEngine] = useState<'llama.cpp' | 'vllm' | 'sglang'>('llama.cpp');
  const [force, setForce] = useState(false);
  // Typed as one line; the profile holds argv items, split at spaces the way --set extraFlags="…" is.
  const [extraFlagsText, setExtraFlagsText] = useState('');
  // A model's "Serve" action arrives as #/server?model=…
  useEffect(() => {
    if (routeModel) setModel(routeModel);
  }, [routeModel]);
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

  const loadProfiles = () => run(() => client.servers.profiles(), setSaved);
  useEffect(() => {
    // The editor starts from the default profile chosen in Settings (the built-in one unless changed).
    void run(
      () => client.servers.profiles(),
      (profiles) => {
        setSaved(profiles);
        const chosen = profiles.find((entry) => entry.name === defaultProfile) ?? profiles.find((entry) => entry.name === 'default');
        if (chosen) {
          setProfile(chosen);
          setProfileName(chosen.name);
          setExtraFlagsText(chosen.extraFlags.join(' '));
        }
      },
    );
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
      () => client.servers.start(model, profile, { engine, force }),
      (snapshot) => useAppStore.getState().applyServer(snapshot),
    );
  };

  return (
    <section aria-labelledby="server-title">
      <h1 id="server-title">Server</h1>
      <div className="toolbar">
        <ModelField client={client} value={model} onChange={setModel} label="server model" />
        <label>
          Engine{' '}
          <select aria-label="engine" value={engine} onChange={(event) => setEngine(event.target.value as typeof engine)}>
            <option value="llama.cpp">llama.cpp (managed build)</option>
            <option value="vllm">vLLM (config.json engine.vllmCommand)</option>
            <option value="sglang">SGLang (config.json engine.sglangCommand)</option>
          </select>
        </label>
        <label title="Start beside another llama-server that claims the cores: both runs are then marked contaminated">
          <input type="checkbox" checked={force} onChange={(event) => setForce(event.target.checked)} /> Start beside another server
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
          <div className="toolbar wrap" data-testid="profile-store">
            <label>
              Open{' '}
              <select
                aria-label="saved profile"
                value={saved.some((entry) => entry.name === profile.name) ? profile.name : ''}
                onChange={(event) => {
                  const chosen = saved.find((entry) => entry.name === event.target.value);
                  if (chosen) {
                    setProfile(chosen);
                    setProfileName(chosen.name);
                    setExtraFlagsText(chosen.extraFlags.join(' '));
                  }
                }}
              >
                <option value="" disabled>
                  (edited)
                </option>
                {saved.map((entry) => (
                  <option key={entry.name}>{entry.name}</option>
                ))}
              </select>
            </label>
            <label>
              Save as{' '}
              <input aria-label="profile name" value={profileName} onChange={(event) => setProfileName(event.target.value)} size={14} />
            </label>
            <button
              type="button"
              disabled={!profileName.trim() || profileName.trim() === 'default' || problems.length > 0}
              title={profileName.trim() === 'default' ? 'the built-in default cannot be overwritten; give the profile a name' : undefined}
              onClick={() => {
                const named = { ...profile, name: profileName.trim() };
                void run(
                  () => client.servers.saveProfile(named),
                  () => {
                    setProfile(named);
                    void loadProfiles();
                  },
                );
              }}
            >
              Save profile
            </button>
            {profile.name !== 'default' && saved.some((entry) => entry.name === profile.name) && (
              <button
                type="button"
                onClick={() => {
                  if (!window.confirm(`Delete the profile ${profile.name}?`)) return;
                  void run(
                    () => client.servers.deleteProfile(profile.name),
                    () => void loadProfiles(),
                  );
                }}
              >
                Delete
              </button>
            )}
          </div>
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
              ) : field.kind === 'text' ? (
                <input
                  value={String(profile[field.key] ?? '')}
                  placeholder={field.empty?.shown}
                  onChange={(event) =>
                    update(field.key, event.target.value.trim() === '' ? (field.empty?.value ?? null) : event.target.value)
                  }
                />
              ) : (
                <input
                  type="number"
                  step="any"
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
          <label className={problemFor('extraFlags').length ? 'invalid' : ''}>
            <span>Extra flags</span>
            <input
              aria-label="extra flags"
              value={extraFlagsText}
              placeholder="--mlock --threads-batch 2"
              onChange={(event) => {
                setExtraFlagsText(event.target.value);
                update('extraFlags', event.target.value.split(/\s+/).filter(Boolean));
              }}
            />
            <small>Tuning flags only; the list is in inferlab server start --help.</small>
            {problemFor('extraFlags').map((problem) => (
              <small key={problem.message} className="error">
                {problem.message}
              </small>
            ))}
          </label>
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
          <LogExplainer client={client} />
        </div>
      </div>
    </section>
  );
}
