import type { AppServices } from '../../../shared/contract';
import type { ProfileProblem, ServerProfile } from '../../../shared/contract/server';
import { KV_CACHE_TYPES, PROFILE_FIELD_HELP } from '../../../shared/profile-fields';

/** The editor's controls; labels and help come from the one table of profile fields. */
/** A text control left empty holds `empty`: no draft model, no adapter, every GPU. */
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
  { key: 'loraAdapter', kind: 'text', empty: { value: null, shown: 'none' } },
  { key: 'loraScale', kind: 'number' },
  { key: 'projector', kind: 'text', empty: { value: null, shown: 'none' } },
  { key: 'gpuDevices', kind: 'text', empty: { value: 'all', shown: 'all' } },
];
const FIELDS = CONTROLS.map((control) => ({ ...control, ...PROFILE_FIELD_HELP[control.key] }));

/**
 * The profile editor: the saved profiles (open, save as, delete) and every field with its help
 * and the problems the service found in it.
 */
export function ProfileEditor(props: {
  client: AppServices;
  profile: ServerProfile;
  onProfile: (profile: ServerProfile) => void;
  saved: ServerProfile[];
  onSavedChanged: () => void;
  problems: ProfileProblem[];
  run: <T>(work: () => Promise<T>, onResult?: (result: T) => void) => Promise<unknown>;
  profileName: string;
  onProfileName: (name: string) => void;
  extraFlagsText: string;
  onExtraFlagsText: (text: string) => void;
}) {
  const { client, profile, saved, problems, run, profileName, extraFlagsText } = props;
  const problemFor = (key: keyof ServerProfile) => problems.filter((problem) => problem.field === key);
  const update = (key: keyof ServerProfile, value: unknown) => props.onProfile({ ...profile, [key]: value });
  const open = (chosen: ServerProfile) => {
    props.onProfile(chosen);
    props.onProfileName(chosen.name);
    props.onExtraFlagsText(chosen.extraFlags.join(' '));
  };
  return (
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
              if (chosen) open(chosen);
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
          <input aria-label="profile name" value={profileName} onChange={(event) => props.onProfileName(event.target.value)} size={14} />
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
                props.onProfile(named);
                props.onSavedChanged();
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
                () => props.onSavedChanged(),
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
            <input type="checkbox" checked={Boolean(profile[field.key])} onChange={(event) => update(field.key, event.target.checked)} />
          ) : field.kind === 'text' ? (
            <input
              value={String(profile[field.key] ?? '')}
              placeholder={field.empty?.shown}
              onChange={(event) => update(field.key, event.target.value.trim() === '' ? (field.empty?.value ?? null) : event.target.value)}
            />
          ) : (
            <input
              type="number"
              step="any"
              value={String(profile[field.key] ?? '')}
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
          placeholder="e.g. --mlock"
          onChange={(event) => {
            props.onExtraFlagsText(event.target.value);
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
  );
}
