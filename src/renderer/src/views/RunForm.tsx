import { useCallback, useEffect, useMemo, useState } from 'react';
import { useServiceCheck } from '../hooks/use-service-check';
import { useRunChoices } from '../hooks/use-run-choices';
import type { AppServices, RunListItem, StartRunSpec } from '../../../shared/contract';
import { ModelField } from '../components/ModelField';
import { NumberField } from '../components/NumberField';
import { NameSelectField } from '../components/NameSelectField';
import { workloadOptions } from '../components/workload-options';
import { SpecForm } from '../components/SpecForm';
import { SloFields, sloOfText, sloText, type SloText } from '../components/SloFields';
import { ErrorBox } from '../components/ErrorBox';
import { useAction } from '../hooks/use-action';

/** The form's own state: text as typed, so a half-typed number is not lost; the spec is derived from it. */
interface RunFormState {
  workload: string;
  target: 'model' | 'endpoint';
  model: string;
  profileName: string;
  settings: string;
  force: boolean;
  endpoint: string;
  metricsUrl: string;
  load: 'closed' | 'open';
  concurrency: string;
  rate: string;
  burstiness: string;
  maxOutstanding: string;
  shards: string;
  rampUpS: string;
  rampShape: 'linear' | 'exponential';
  stopAfter: 'requests' | 'duration';
  requests: string;
  durationS: string;
  warmup: string;
  slo: SloText;
  firstTokenTimeoutS: string;
  timeoutS: string;
  referenceRunId: string;
  private: boolean;
}

const number = (text: string): number | null => (text.trim() === '' ? null : Number(text));

export function initialRunForm(spec: StartRunSpec): RunFormState {
  return {
    workload: spec.workload,
    target: spec.endpoint ? 'endpoint' : 'model',
    model: spec.model ?? '',
    profileName: spec.profileName,
    settings: (spec.settings ?? []).join('\n'),
    force: spec.force ?? false,
    endpoint: spec.endpoint ?? '',
    metricsUrl: spec.metricsUrl ?? '',
    load: spec.rate ? 'open' : 'closed',
    concurrency: String(spec.concurrency ?? 1),
    rate: String(spec.rate ?? ''),
    burstiness: String(spec.burstiness ?? ''),
    maxOutstanding: String(spec.maxOutstanding ?? ''),
    shards: String(spec.shards ?? ''),
    rampUpS: String(spec.rampUpS ?? ''),
    rampShape: spec.rampShape ?? 'linear',
    stopAfter: spec.durationS ? 'duration' : 'requests',
    requests: String(spec.requests ?? ''),
    durationS: String(spec.durationS ?? ''),
    warmup: String(spec.warmup),
    slo: sloText(spec.slo),
    firstTokenTimeoutS: String(spec.firstTokenTimeoutS ?? ''),
    timeoutS: String(spec.timeoutS ?? ''),
    referenceRunId: spec.referenceRunId ?? '',
    private: spec.private,
  };
}

/** The spec the CLI's flags would build from the same choices. */
export function specFromForm(form: RunFormState): StartRunSpec {
  const open = form.load === 'open';
  const managed = form.target === 'model';
  return {
    workload: form.workload,
    model: managed ? form.model.trim() || null : null,
    endpoint: managed ? null : form.endpoint.trim() || null,
    profileName: form.profileName,
    settings: managed
      ? form.settings
          .split('\n')
          .map((line) => line.trim())
          .filter(Boolean)
      : [],
    force: managed && form.force,
    metricsUrl: managed ? null : form.metricsUrl.trim() || null,
    // A field the chosen mode needs, left empty, is sent as 0 so the check names it (rather than a default standing in).
    concurrency: open ? null : (number(form.concurrency) ?? 0),
    rate: open ? (number(form.rate) ?? 0) : null,
    burstiness: open ? number(form.burstiness) : null,
    maxOutstanding: open ? number(form.maxOutstanding) : null,
    shards: open ? number(form.shards) : null,
    rampUpS: number(form.rampUpS),
    rampShape: number(form.rampUpS) === null ? null : form.rampShape,
    requests: form.stopAfter === 'requests' ? (number(form.requests) ?? 0) : null,
    durationS: form.stopAfter === 'duration' ? (number(form.durationS) ?? 0) : null,
    warmup: number(form.warmup) ?? 0,
    slo: sloOfText(form.slo),
    firstTokenTimeoutS: number(form.firstTokenTimeoutS),
    timeoutS: number(form.timeoutS),
    referenceRunId: form.referenceRunId || null,
    private: form.private,
  };
}

/**
 * Every option of `inferlab run`, checked as it is filled in by the same check `runs.start`
 * applies (`runs.validate`), so a spec the service would refuse cannot be started.
 */
export function RunForm({
  client,
  initial,
  running,
  onStart,
  onCancel,
}: {
  client: AppServices;
  initial: StartRunSpec;
  running: boolean;
  onStart: (spec: StartRunSpec) => void;
  onCancel: () => void;
}) {
  const [form, setForm] = useState<RunFormState>(() => initialRunForm(initial));
  // A model's "Run" action hands a new starting point; it replaces what was typed.
  useEffect(() => setForm(initialRunForm(initial)), [initial]);
  const { workloads, profiles, error: choicesError } = useRunChoices(client);
  const [runs, setRuns] = useState<RunListItem[]>([]);
  const { error: runsError, run: readRuns } = useAction();
  const spec = useMemo(() => specFromForm(form), [form]);
  const check = useCallback((candidate: StartRunSpec) => client.runs.validate(candidate), [client]);
  const problem = useServiceCheck(check, spec);
  const set = <K extends keyof RunFormState>(key: K, value: RunFormState[K]) => setForm((current) => ({ ...current, [key]: value }));
  const text = (key: keyof RunFormState) => ({
    value: String(form[key]),
    onChange: (event: { target: { value: string } }) => set(key, event.target.value as never),
  });

  // A run that just finished can be the next one's reference.
  useEffect(() => void readRuns(() => client.runs.list(50), setRuns), [client, running, readRuns]);

  return (
    <SpecForm label="run options" problem={problem} onSubmit={() => onStart(spec)}>
      <ErrorBox error={choicesError ?? runsError} />
      <fieldset>
        <legend>What</legend>
        <NameSelectField
          label="Workload"
          ariaLabel="workload"
          value={form.workload}
          items={workloadOptions(workloads)}
          onChange={(name) => set('workload', name)}
        />
        <label>
          <input type="radio" name="target" checked={form.target === 'model'} onChange={() => set('target', 'model')} /> Managed
          llama-server
        </label>
        <label>
          <input type="radio" name="target" checked={form.target === 'endpoint'} onChange={() => set('target', 'endpoint')} />{' '}
          OpenAI-compatible endpoint
        </label>
        {form.target === 'model' ? (
          <>
            <ModelField client={client} value={form.model} onChange={(model) => set('model', model)} />
            <NameSelectField
              label="Profile"
              ariaLabel="profile"
              value={form.profileName}
              items={profiles}
              onChange={(name) => set('profileName', name)}
            />
            <label>
              Settings over the profile{' '}
              <textarea
                aria-label="settings"
                {...text('settings')}
                rows={2}
                placeholder={'one FIELD=VALUE per line, e.g.\ncontextSize=8192'}
              />
            </label>
            <label>
              <input type="checkbox" checked={form.force} onChange={(event) => set('force', event.target.checked)} /> Start beside another
              llama-server that claims the cores
            </label>
          </>
        ) : (
          <>
            <label>
              Endpoint <input aria-label="endpoint" {...text('endpoint')} size={28} placeholder="http://127.0.0.1:8000" />
            </label>
            <label>
              Metrics URL <input aria-label="metrics url" {...text('metricsUrl')} size={28} placeholder="on the endpoint's own host" />
            </label>
            <small>
              Another machine's endpoint must be listed under roots.endpoints in config.json; its API key comes from endpointKeys there,
              never from this page.
            </small>
          </>
        )}
      </fieldset>
      <LoadFields form={form} set={set} text={text} />
      <fieldset>
        <legend>Judging</legend>
        <SloFields value={form.slo} onChange={(slo) => set('slo', slo)} ariaPrefix="slo" />
        <NumberField
          label="First-token timeout (s)"
          aria-label="first token timeout"
          min={0}
          step="any"
          {...text('firstTokenTimeoutS')}
          placeholder="120"
        />
        <NumberField label="Timeout (s)" aria-label="timeout" min={0} step="any" {...text('timeoutS')} placeholder="600" />
        <label>
          Reference run{' '}
          <select aria-label="reference run" value={form.referenceRunId} onChange={(event) => set('referenceRunId', event.target.value)}>
            <option value="">none</option>
            {runs.map((run) => (
              <option key={run.runId} value={run.runId}>
                {run.runId.slice(0, 8)} {run.model ?? ''} {run.workload ?? run.kind}
              </option>
            ))}
          </select>
        </label>
        <label>
          <input type="checkbox" checked={form.private} onChange={(event) => set('private', event.target.checked)} /> Private (store hashes,
          not text)
        </label>
      </fieldset>
      <p role="status" data-testid="run-problem" className={problem ? 'error' : 'empty'}>
        {problem ?? 'Ready to start.'}
      </p>
      <button type="submit" className="primary" disabled={running || problem !== null}>
        Start run
      </button>
      {running && (
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      )}
    </SpecForm>
  );
}

/** What the form's parts share: its state, a setter by key, and the props that bind a text input to a key. */
interface FormBinding {
  form: RunFormState;
  set: <K extends keyof RunFormState>(key: K, value: RunFormState[K]) => void;
  text: (key: keyof RunFormState) => { value: string; onChange: (event: { target: { value: string } }) => void };
}

/** How the load is offered (closed or open loop), when it stops, and the warmup and ramp before it is measured. */
function LoadFields({ form, set, text }: FormBinding) {
  return (
    <fieldset>
      <legend>Load</legend>
      <label>
        <input type="radio" name="load" checked={form.load === 'closed'} onChange={() => set('load', 'closed')} /> Closed loop
      </label>
      <label>
        <input type="radio" name="load" checked={form.load === 'open'} onChange={() => set('load', 'open')} /> Open loop
      </label>
      {form.load === 'closed' ? (
        <NumberField label="Concurrency" aria-label="concurrency" min={1} {...text('concurrency')} />
      ) : (
        <>
          <NumberField label="Rate (req/s)" aria-label="rate" min={0} step="any" {...text('rate')} />
          <NumberField label="Burstiness" aria-label="burstiness" min={0} step="any" {...text('burstiness')} placeholder="1 = Poisson" />
          <NumberField label="Max outstanding" aria-label="max outstanding" min={1} {...text('maxOutstanding')} placeholder="256" />
          <NumberField
            label="Stream shards"
            aria-label="stream shards"
            min={1}
            max={64}
            {...text('shards')}
            placeholder="1"
            title="Worker threads that send the requests and read their streams, each on its own event loop: for rates one loop cannot keep to its schedule"
          />
        </>
      )}
      <label>
        <input type="radio" name="stop" checked={form.stopAfter === 'requests'} onChange={() => set('stopAfter', 'requests')} /> Requests
      </label>
      <label>
        <input type="radio" name="stop" checked={form.stopAfter === 'duration'} onChange={() => set('stopAfter', 'duration')} /> Duration
      </label>
      {form.stopAfter === 'requests' ? (
        <input aria-label="requests" type="number" min={1} {...text('requests')} />
      ) : (
        <input aria-label="duration seconds" type="number" min={0} step="any" {...text('durationS')} placeholder="seconds" />
      )}
      <NumberField label="Warmup" aria-label="warmup" min={0} {...text('warmup')} />
      <NumberField label="Ramp-up (s)" aria-label="ramp up seconds" min={0} step="any" {...text('rampUpS')} placeholder="none" />
      <label>
        Ramp{' '}
        <select
          aria-label="ramp shape"
          value={form.rampShape}
          onChange={(event) => set('rampShape', event.target.value as 'linear' | 'exponential')}
        >
          <option value="linear">linear</option>
          <option value="exponential">exponential</option>
        </select>
      </label>
    </fieldset>
  );
}
