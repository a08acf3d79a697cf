import { useEffect, useState } from 'react';
import type { AppServices, ServerProfile, SettingsInfo } from '../../../shared/contract';
import { ErrorBox } from '../components/ErrorBox';
import { useAction } from '../hooks/use-action';
import { useAppStore } from '../state/store';

/**
 * Where everything is, and the settings the UI may change: the name decisions are recorded
 * under, the profile forms start with, and how often runs sample telemetry. Folders and the
 * engine are shown, not edited: what this interface may read and run is the config file's to say.
 */
export function SettingsView({ client }: { client: AppServices }) {
  const [settings, setSettings] = useState<SettingsInfo | null>(null);
  const [profiles, setProfiles] = useState<ServerProfile[]>([]);
  const [decisionName, setDecisionName] = useState('');
  const [defaultProfile, setDefaultProfile] = useState('default');
  const [interval, setIntervalText] = useState('250');
  const [saved, setSaved] = useState(false);
  const { error, run } = useAction();

  const show = (info: SettingsInfo) => {
    setSettings(info);
    setDecisionName(info.decisionName);
    setDefaultProfile(info.defaultProfile);
    setIntervalText(String(info.telemetryIntervalMs));
    useAppStore.getState().applySettings(info);
  };
  useEffect(() => {
    void run(() => client.settings.get(), show);
    void run(() => client.servers.profiles(), setProfiles);
  }, [client]);

  const intervalMs = Number(interval);
  const range = settings?.telemetryIntervalRangeMs;
  const intervalProblem =
    range && !(Number.isInteger(intervalMs) && intervalMs >= range.min && intervalMs <= range.max)
      ? `The telemetry interval must be a whole number of ms from ${range.min} to ${range.max}.`
      : null;

  return (
    <section aria-labelledby="settings-title">
      <h1 id="settings-title">Settings</h1>
      <ErrorBox error={error} />
      {!settings ? (
        <p className="skeleton" aria-busy="true">
          Loading settings…
        </p>
      ) : (
        <>
          <form
            className="card run-form"
            aria-label="settings"
            onSubmit={(event) => {
              event.preventDefault();
              setSaved(false);
              void run(
                () => client.settings.update({ decisionName, defaultProfile, telemetryIntervalMs: intervalMs }),
                (info) => {
                  show(info);
                  setSaved(true);
                },
              );
            }}
          >
            <label>
              Name for decisions{' '}
              <input
                aria-label="name for decisions"
                value={decisionName}
                maxLength={80}
                onChange={(event) => setDecisionName(event.target.value)}
                placeholder="your name"
              />
            </label>
            <label>
              Default profile{' '}
              <select aria-label="default profile" value={defaultProfile} onChange={(event) => setDefaultProfile(event.target.value)}>
                {profiles.map((profile) => (
                  <option key={profile.name}>{profile.name}</option>
                ))}
              </select>
            </label>
            <label>
              Telemetry interval (ms){' '}
              <input
                aria-label="telemetry interval"
                type="number"
                min={range?.min}
                max={range?.max}
                value={interval}
                onChange={(event) => setIntervalText(event.target.value)}
              />
            </label>
            <p role="status" className={intervalProblem ? 'error' : 'empty'} data-testid="settings-status">
              {intervalProblem ?? (saved ? `Saved to ${settings.configFile}.` : 'Saved to the config file; the CLI reads the same file.')}
            </p>
            <button type="submit" className="primary" disabled={intervalProblem !== null}>
              Save settings
            </button>
          </form>
          <h2>Where things are</h2>
          <SettingsPaths settings={settings} />
        </>
      )}
    </section>
  );
}

/** Where the data, config, database, engine and the folders this window may read are. */
function SettingsPaths({ settings }: { settings: SettingsInfo }) {
  return (
    <table data-testid="settings-paths">
      <tbody>
        <tr>
          <th>Data folder</th>
          <td>
            <code>{settings.dataDir}</code>
          </td>
        </tr>
        <tr>
          <th>Config file</th>
          <td>
            <code>{settings.configFile}</code>
          </td>
        </tr>
        <tr>
          <th>Database</th>
          <td>
            <code>{settings.databasePath}</code>
          </td>
        </tr>
        <tr>
          <th>Engine</th>
          <td>
            <EngineCell settings={settings} />
          </td>
        </tr>
        <tr>
          <th>Model folders</th>
          <td>
            <ul>
              {settings.modelFolders.map((folder) => (
                <li key={folder}>
                  <code>{folder}</code>
                </li>
              ))}
            </ul>
            <small>
              This window may use models in these folders (and files chosen with Browse… in the desktop app). Add a folder under{' '}
              <code>roots.models</code> in the config file: what the UI may read is the file owner's choice, not a page's.
            </small>
          </td>
        </tr>
        <tr>
          <th>Workload folders</th>
          <td>
            <ul>
              {settings.workloadFolders.map((folder) => (
                <li key={folder}>
                  <code>{folder}</code>
                </li>
              ))}
            </ul>
            <small>
              More under <code>roots.workloads</code> in the config file.
            </small>
          </td>
        </tr>
      </tbody>
    </table>
  );
}

/** The engine in use and how it was built, or why there is none. */
function EngineCell({ settings }: { settings: SettingsInfo }) {
  return settings.engine ? (
    <>
      <code>{settings.engine.serverPath}</code>
      <br />
      <small>
        backend {settings.engine.backend ?? 'unknown'} · {settings.engine.version ?? 'version unknown'} · found via {settings.engine.origin}
        {settings.engine.build && (
          <>
            {' '}
            ·{' '}
            {settings.engine.build.route === 'prebuilt'
              ? `compiled on ${settings.engine.build.packages.map((item) => `${item.name}@${item.version}`).join(' + ')}`
              : 'built from source'}
            {settings.engine.build.cpuVariant && ` · CPU variant ${settings.engine.build.cpuVariant}`}
            {settings.engine.build.gpuLibrary && ` · ${settings.engine.build.gpuLibrary}`}
          </>
        )}
      </small>
    </>
  ) : (
    <span className="error">{settings.engineProblem}</span>
  );
}
