import { useCallback, useEffect, useMemo, useState } from 'react';
import { useServiceCheck } from '../hooks/use-service-check';
import { useRunChoices } from '../hooks/use-run-choices';
import type { AppServices, StartExperimentSpec } from '../../../shared/contract';
import { EXPERIMENT_DEFAULTS } from '../../../shared/experiment-defaults';
import { ModelField } from '../components/ModelField';
import { NumberField, type FieldHint } from '../components/NumberField';
import { NameSelectField } from '../components/NameSelectField';
import { workloadOptions } from '../components/workload-options';
import { EXPERIMENT_KIND_ORDER, EXPERIMENT_KIND_VIEWS } from '../experiment-kinds/registry';
import { GatesFields } from '../experiment-kinds/gates-fields';
import { lines, number, type ExperimentFormState, type FormText, type KindFieldProps } from '../experiment-kinds/form-state';
import { SpecForm } from '../components/SpecForm';
import { SloFields, sloOfText, sloText } from '../components/SloFields';
import { ErrorBox } from '../components/ErrorBox';

export type { ExperimentFormState } from '../experiment-kinds/form-state';

type Kind = StartExperimentSpec['kind'];

export function initialExperimentForm(kind: Kind = 'quant', model = 'demo:f16'): ExperimentFormState {
  return {
    kind,
    model,
    source: 'quants',
    quants: 'f16,q8_0,q4_k_m',
    files: '',
    workload: EXPERIMENT_KIND_VIEWS[kind].defaultWorkload,
    repeats: String(EXPERIMENT_DEFAULTS.repeats),
    requestsPerWindow: EXPERIMENT_KIND_VIEWS[kind].form.design?.requestsOptional ? '' : String(EXPERIMENT_DEFAULTS.requestsPerWindow),
    concurrency: '1',
    maxAnswerTokens: '',
    profileName: 'default',
    settings: '',
    vramBudgetMib: '',
    minAgreement: '',
    maxKld: '',
    acceptanceAlpha: '',
    minAcceptance: '',
    disabledGates: [],
    objective: '',
    kldTextFile: '',
    slo: sloText(null),
    coldStarts: '',
    skipCacheReset: false,
    fixedDesign: false,
    varyField: 'batchSize',
    varyValues: '256,512',
    loadConcurrencies: '',
    capacityBy: 'rate',
    percentile: '90',
    startLoad: '',
    maxLoad: '',
    keepCache: false,
    draftModel: 'demo:q4_k_m',
    draftMax: '4,8,16',
    cooldownS: '',
    cacheTypes: 'f16,q8_0',
    adapters: 'demo:lora',
    adapterServing: 'own',
    contextSize: '',
  };
}

function constraintsOf(form: ExperimentFormState): StartExperimentSpec['constraints'] {
  const sloSpec = sloOfText(form.slo);
  const mode = EXPERIMENT_KIND_VIEWS[form.kind].form.constraints;
  if (mode === 'gates')
    return {
      vramBudgetMib: number(form.vramBudgetMib),
      minAgreement: number(form.minAgreement),
      minAcceptance: number(form.minAcceptance),
      maxKld: number(form.maxKld),
      acceptanceAlpha: number(form.acceptanceAlpha),
      slo: sloSpec,
      ...(form.objective ? { objective: form.objective } : {}),
      ...(form.disabledGates.length > 0 ? { disabledGates: form.disabledGates } : {}),
    };
  return mode === 'slo' && sloSpec ? { vramBudgetMib: null, minAgreement: null, minAcceptance: null, slo: sloSpec } : null;
}

/** The spec `inferlab experiment KIND` would build from the same choices: the shared fields, then the kind's own. */
export function experimentSpecFromForm(form: ExperimentFormState): StartExperimentSpec {
  const { form: kindForm } = EXPERIMENT_KIND_VIEWS[form.kind];
  const shared = {
    model: form.model.trim(),
    workload: form.workload,
    // Left empty, a required number is sent as 0 so the check names the field instead of a default standing in.
    repeats: number(form.repeats) ?? 0,
    requestsPerWindow: kindForm.design?.requestsOptional ? number(form.requestsPerWindow) : (number(form.requestsPerWindow) ?? 0),
    concurrency: kindForm.design?.concurrency === false ? null : (number(form.concurrency) ?? 0),
    maxAnswerTokens: number(form.maxAnswerTokens),
    profileName: form.profileName,
    settings: lines(form.settings),
    constraints: constraintsOf(form),
    cooldownS: number(form.cooldownS),
  };
  const kldText = kindForm.constraints === 'gates' ? { kldTextFile: form.kldTextFile.trim() || null } : {};
  // The kind's fields come from its own form entry, so the whole is a spec of that kind.
  return { kind: form.kind, ...shared, ...kldText, ...kindForm.specFields(form) } as StartExperimentSpec;
}

const COOLDOWN_HINT: FieldHint = {
  short: 'none',
  meaning:
    'Before each window after the first, wait up to this long for the GPU to return to its idle temperature and clocks; empty: no wait',
};
const ANSWER_TOKENS_HINT: FieldHint = { short: "workload's", meaning: 'Empty: as many as each workload item asks for' };

/** The fields every kind shares in the design: repeats, window size, concurrency, pacing, the server profile. */
function SharedDesign({ props, profiles }: { props: KindFieldProps; profiles: { name: string }[] }) {
  const { form, set, text } = props;
  const design = EXPERIMENT_KIND_VIEWS[form.kind].form.design ?? {};
  return (
    <>
      {design.repeats !== false && <NumberField label="Repeats" min={1} {...text('repeats', 'repeats')} />}
      <NumberField
        label={design.requestsLabel ?? 'Requests per window'}
        min={1}
        {...text('requestsPerWindow', 'requests per window')}
        hint={design.requestsHint}
      />
      {design.concurrency !== false && <NumberField label="Concurrency" min={1} {...text('concurrency', 'experiment concurrency')} />}
      <NumberField label="Cooldown between windows (s)" min={1} {...text('cooldownS', 'cooldown')} hint={COOLDOWN_HINT} />
      <NumberField label="Max answer tokens" min={1} {...text('maxAnswerTokens', 'max answer tokens')} hint={ANSWER_TOKENS_HINT} />
      <NameSelectField
        label="Profile"
        ariaLabel="experiment profile"
        value={form.profileName}
        items={profiles}
        onChange={(name) => set('profileName', name)}
      />
      <label>
        Settings over the profile <textarea {...text('settings', 'experiment settings')} rows={2} placeholder="one FIELD=VALUE per line" />
      </label>
    </>
  );
}

/** The SLO every kind with a target takes, after the gates of the kinds that have them. */
function ConstraintFields({ props }: { props: KindFieldProps }) {
  const mode = EXPERIMENT_KIND_VIEWS[props.form.kind].form.constraints;
  if (mode === 'none') return null;
  const { form, set } = props;
  return (
    <fieldset>
      <legend>{mode === 'gates' ? 'Gates and recommendation' : 'SLO'}</legend>
      {mode === 'gates' && <GatesFields {...props} />}
      <SloFields value={form.slo} onChange={(slo) => set('slo', slo)} ariaPrefix="experiment slo" />
    </fieldset>
  );
}

/**
 * Every experiment `inferlab experiment` can start, checked as it is filled in by the check
 * `experiments.start` applies (`experiments.validate`). Each kind's own fields come from its
 * entry in experiment-kinds/registry.ts.
 */
export function ExperimentForm({
  client,
  initial,
  running,
  onStart,
}: {
  client: AppServices;
  initial: ExperimentFormState;
  running: boolean;
  onStart: (spec: StartExperimentSpec) => void;
}) {
  const [form, setForm] = useState<ExperimentFormState>(initial);
  const { workloads, profiles, error: choicesError } = useRunChoices(client);
  const spec = useMemo(() => experimentSpecFromForm(form), [form]);
  const check = useCallback((candidate: StartExperimentSpec) => client.experiments.validate(candidate), [client]);
  const problem = useServiceCheck(check, spec);
  const set = <K extends keyof ExperimentFormState>(key: K, value: ExperimentFormState[K]) =>
    setForm((current) => ({ ...current, [key]: value }));
  const text: FormText = (key, label) => ({
    'aria-label': label,
    value: String(form[key]),
    onChange: (event) => set(key, event.target.value as never),
  });
  // A new preset from a model's actions replaces what was typed.
  useEffect(() => setForm(initial), [initial]);

  const { form: kindForm } = EXPERIMENT_KIND_VIEWS[form.kind];
  const props: KindFieldProps = {
    form,
    set,
    setForm,
    text,
    modelField: <ModelField client={client} value={form.model} onChange={(model) => set('model', model)} />,
  };
  const { Subject, Design } = kindForm;
  return (
    <SpecForm label="experiment options" problem={problem} onSubmit={() => onStart(spec)}>
      <ErrorBox error={choicesError} />
      <fieldset>
        <legend>Experiment</legend>
        {EXPERIMENT_KIND_ORDER.map((option) => (
          <label key={option}>
            <input
              type="radio"
              name="experiment-kind"
              checked={form.kind === option}
              onChange={() =>
                setForm((current) => ({
                  ...current,
                  kind: option,
                  workload: EXPERIMENT_KIND_VIEWS[option].defaultWorkload,
                  // A kind whose window size follows from its design starts empty; another kind's empty field gets the default back.
                  requestsPerWindow: EXPERIMENT_KIND_VIEWS[option].form.design?.requestsOptional
                    ? ''
                    : current.requestsPerWindow === ''
                      ? String(EXPERIMENT_DEFAULTS.requestsPerWindow)
                      : current.requestsPerWindow,
                }))
              }
            />{' '}
            {EXPERIMENT_KIND_VIEWS[option].label}
          </label>
        ))}
        {Subject ? <Subject {...props} /> : props.modelField}
        <NameSelectField
          label="Workload"
          ariaLabel="experiment workload"
          value={form.workload}
          items={workloadOptions(workloads)}
          onChange={(name) => set('workload', name)}
        />
      </fieldset>
      <fieldset>
        <legend>Design</legend>
        <SharedDesign props={props} profiles={profiles} />
        {Design && <Design {...props} />}
      </fieldset>
      <ConstraintFields props={props} />
      <p role="status" data-testid="experiment-problem" className={problem ? 'error' : 'empty'}>
        {problem ?? 'Ready to start.'}
      </p>
      <button type="submit" className="primary" disabled={running || problem !== null}>
        Start experiment
      </button>
    </SpecForm>
  );
}
