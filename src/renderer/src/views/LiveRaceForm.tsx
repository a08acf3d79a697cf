import { useEffect, useState } from 'react';
import type { AppServices, LiveRaceRequest, RaceTaskProgress } from '../../../shared/contract';
import { LIVE_RACE_LIMITS } from '../../../shared/contract/specs';
import { raceItemOf, type Race } from '../../../shared/race';
import { startingTask, taskIsOver } from '../../../shared/tasks';
import { ErrorBox } from '../components/ErrorBox';
import { ModelField } from '../components/ModelField';
import { NumberField } from '../components/NumberField';
import { useAction } from '../hooks/use-action';
import { taskOfKind, useAppStore } from '../state/store';

const DEFAULT_PROMPT = 'Explain in three sentences why the sky is blue.';

/** FIELD=VALUE settings as typed, separated by semicolons or lines (a value may hold a comma: gpuDevices=0,1). */
const settingsOf = (text: string) =>
  text
    .split(/[;\n]/)
    .map((setting) => setting.trim())
    .filter(Boolean);

/** What every lane is given: a typed prompt, or an item of a workload (its messages, images and sampling) in its place. */
function RacePromptFields(props: {
  prompt: string;
  setPrompt: (prompt: string) => void;
  item: string;
  setItem: (item: string) => void;
  maxTokens: number;
  setMaxTokens: (maxTokens: number) => void;
}) {
  const itemGiven = props.item.trim() !== '';
  return (
    <fieldset>
      <legend>Prompt</legend>
      <textarea
        aria-label="race prompt"
        rows={3}
        maxLength={LIVE_RACE_LIMITS.promptChars}
        value={props.prompt}
        disabled={itemGiven}
        onChange={(event) => props.setPrompt(event.target.value)}
      />
      <label>
        or a workload item (WORKLOAD#ID){' '}
        <input
          aria-label="race workload item"
          value={props.item}
          onChange={(event) => props.setItem(event.target.value)}
          size={28}
          placeholder="chat-short#planets"
        />
      </label>
      {itemGiven && raceItemOf(props.item.trim()) === null && <small className="error">Write it as WORKLOAD#ID.</small>}
      <NumberField
        label="Max tokens"
        aria-label="race max tokens"
        value={props.maxTokens}
        min={1}
        max={LIVE_RACE_LIMITS.maxTokens}
        onChange={(event) => props.setMaxTokens(Number(event.target.value))}
      />
    </fieldset>
  );
}

/**
 * A race measured now: two to four models, one prompt. Apart (the default) runs the lanes one after
 * another so none slows another; together sends every prompt at one instant, and the lanes compete.
 * `onRaced` gets the race once every lane is measured and stored.
 */
export function LiveRaceForm({ client, onRaced }: { client: AppServices; onRaced: (race: Race) => void }) {
  const [models, setModels] = useState(['demo:f16', 'demo:q4_k_m']);
  /** Each lane's settings over the default profile, as typed: an adapter, a cache type. */
  const [settings, setSettings] = useState(['', '']);
  const [prompt, setPrompt] = useState(DEFAULT_PROMPT);
  /** A workload item (WORKLOAD#ID) raced instead of the prompt, as typed; empty for the prompt. */
  const [item, setItem] = useState('');
  const [maxTokens, setMaxTokens] = useState(64);
  const [together, setTogether] = useState(false);
  const [jobId, setJobId] = useState<string | null>(null);
  const job = useAppStore((state) => taskOfKind(state.tasks, jobId, 'race'));
  const { error, run } = useAction();
  const running = job !== null && !taskIsOver(job.phase);

  useEffect(() => {
    if (job?.phase === 'finished' && job.detail.race) onRaced(job.detail.race);
  }, [job?.phase]);

  const start = () => {
    const request: LiveRaceRequest = {
      lanes: models.map((model, index) => ({ model: model.trim(), settings: settingsOf(settings[index] ?? '') })),
      ...(item.trim() === '' ? { prompt } : { item: raceItemOf(item.trim())! }),
      maxTokens,
      together,
    };
    void run(
      () => client.runs.startRace(request),
      (started) => {
        // Its first events may have arrived already; only a job not yet heard of starts as "starting".
        if (!useAppStore.getState().tasks[started.jobId])
          useAppStore.getState().applyTask(startingTask<RaceTaskProgress>(started.jobId, 'race', { race: null }, models.length));
        setJobId(started.jobId);
      },
    );
  };
  const setModel = (index: number, model: string) => setModels((current) => current.map((old, at) => (at === index ? model : old)));
  const asked = item.trim() === '' ? prompt.trim() !== '' : raceItemOf(item.trim()) !== null;
  const ready = models.every((model) => model.trim() !== '') && asked && Number.isInteger(maxTokens) && maxTokens >= 1;
  return (
    <form
      className="run-form live-race"
      aria-label="race models now"
      onSubmit={(event) => {
        event.preventDefault();
        if (ready && !running) start();
      }}
    >
      <h2>Race models now</h2>
      <fieldset>
        <legend>Lanes</legend>
        {models.map((model, index) => (
          <div key={index} className="toolbar">
            <strong>{index + 1}.</strong>
            <ModelField client={client} value={model} onChange={(value) => setModel(index, value)} label={`lane ${index + 1} model`} />
            <input
              aria-label={`lane ${index + 1} settings`}
              value={settings[index] ?? ''}
              onChange={(event) =>
                setSettings((current) => models.map((_, at) => (at === index ? event.target.value : (current[at] ?? ''))))
              }
              size={36}
              placeholder="settings: loraAdapter=demo:lora; …"
            />
            {models.length > LIVE_RACE_LIMITS.lanes.min && (
              <button
                type="button"
                onClick={() => {
                  setModels((current) => current.filter((_, at) => at !== index));
                  setSettings((current) => current.filter((_, at) => at !== index));
                }}
              >
                Remove
              </button>
            )}
          </div>
        ))}
        {models.length < LIVE_RACE_LIMITS.lanes.max && (
          <button
            type="button"
            onClick={() => {
              setModels((current) => [...current, '']);
              setSettings((current) => [...current, '']);
            }}
          >
            Add a lane
          </button>
        )}
      </fieldset>
      <RacePromptFields
        prompt={prompt}
        setPrompt={setPrompt}
        item={item}
        setItem={setItem}
        maxTokens={maxTokens}
        setMaxTokens={setMaxTokens}
      />
      <fieldset>
        <legend>How the lanes run</legend>
        <label>
          <input type="checkbox" checked={together} onChange={(event) => setTogether(event.target.checked)} /> Together: every prompt sent
          at one instant
        </label>
        <small>
          {together
            ? 'Every lane starts its server and is warmed by one request; then all are given the prompt at once, so they compete for the GPU and each is slower than alone.'
            : 'One after another, each on its own server warmed by one request, so no lane slows another; then all play together at their recorded pace.'}
        </small>
      </fieldset>
      <div className="toolbar">
        <button type="submit" className="primary" disabled={!ready || running}>
          Measure the race
        </button>
        {running && job && (
          <>
            <button type="button" onClick={() => void run(() => client.tasks.cancel(job.jobId))}>
              Cancel
            </button>
            <p aria-live="polite" data-testid="live-race-progress">
              {job.message} ({job.done}/{job.total ?? models.length} lanes measured)
            </p>
          </>
        )}
      </div>
      {job?.error && <ErrorBox error={new Error(job.error.message)} />}
      <ErrorBox error={error} />
    </form>
  );
}
