import { useEffect, useMemo, useState } from 'react';
import type { AppServices } from '../../../shared/contract';
import type { ProfileProblem, ServerProfile } from '../../../shared/contract/server';
import { ErrorBox } from '../components/ErrorBox';
import { useAppStore } from '../state/store';
import { useAction } from '../hooks/use-action';
import { ModelField } from '../components/ModelField';
import { LogExplainer } from './LogExplainer';
import { ProfileEditor } from './ProfileEditor';
import { EffectiveConfig } from './EffectiveConfig';

const EMPTY_LOG: string[] = [];

/** A server's log, and the error of reading it. */
function useServerLog(client: AppServices, serverId: string | null): { logs: string[]; error: Error | null } {
  // New lines arrive as server.log events; what the server wrote before any event reached this page is read once.
  const logs = useAppStore((state) => (serverId ? state.serverLogs[serverId] : undefined)) ?? EMPTY_LOG;
  const { error, run } = useAction();
  useEffect(() => {
    if (serverId && !useAppStore.getState().serverLogs[serverId])
      void run(
        () => client.servers.logs(serverId),
        (lines) => {
          if (!useAppStore.getState().serverLogs[serverId]) useAppStore.getState().appendServerLog(serverId, lines);
        },
      );
  }, [client, serverId, run]);
  return { logs, error };
}

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
  const { logs, error: logsError } = useServerLog(client, current?.id ?? null);

  if (!profile)
    return (
      <section>
        <h1>Server</h1>
        <ErrorBox error={error} />
      </section>
    );
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
      <ErrorBox error={error ?? logsError} />
      {current?.fault && (
        <div role="alert" className="error-box">
          <strong>{current.fault.code}</strong>: {current.fault.message}
          <br />
          Fix: {current.fault.hint}
        </div>
      )}
      <div className="columns">
        <ProfileEditor
          client={client}
          profile={profile}
          onProfile={setProfile}
          saved={saved}
          onSavedChanged={() => void loadProfiles()}
          problems={problems}
          run={run}
          profileName={profileName}
          onProfileName={setProfileName}
          extraFlagsText={extraFlagsText}
          onExtraFlagsText={setExtraFlagsText}
        />
        <div>
          <EffectiveConfig current={current} />
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
