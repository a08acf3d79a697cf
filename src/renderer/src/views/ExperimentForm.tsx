import { useCallback, useEffect, useMemo, useState } from 'react';
import { useServiceCheck } from '../hooks/use-service-check';
import { useRunChoices } from '../hooks/use-run-choices';
import type { AppServices, QualityGate, QuantObjective, StartExperimentSpec } from '../../../shared/contract';
import { EXPERIMENT_DEFAULTS } from '../../../shared/experiment-defaults';
import { PROFILE_FIELD_HELP } from '../../../shared/profile-fields';
import { ModelField } from '../components/ModelField';
import { NumberField } from '../components/NumberField';
import { NameSelectField } from '../components/NameSelectField';
import { EXPERIMENT_KIND_ORDER, EXPERIMENT_KIND_VIEWS } from '../experiment-kinds/registry';
import { KvCacheFields } from '../experiment-kinds/kvcache';

type Kind = StartExperimentSpec['kind'];

/** The form's own state: text as typed; the spec is derived from it, the way the CLI's flags build it. */
export interface ExperimentFormState {
  kind: Kind;
  model: string;
  source: 'quants' | 'files';
  quants: string;
  files: string;
  workload: string;
  repeats: string;
  requestsPerWindow: string;
  concurrency: string;
  maxAnswerTokens: string;
  profileName: string;
  settings: string;
  vramBudgetMib: string;
  minAgreement: string;
  maxKld: string;
  acceptanceAlpha: string;
  minAcceptance: string;
  disabledGates: QualityGate[];
  objective: QuantObjective | '';
  kldTextFile: string;
  sloTtft: string;
  sloTpot: string;
  sloE2e: string;
  coldStarts: string;
  skipCacheReset: boolean;
  varyField: string;
  varyValues: string;
  loadConcurrencies: string;
  capacityBy: 'rate' | 'concurrency' | 'users';
  percentile: string;
  startLoad: string;
  maxLoad: string;
  keepCache: boolean;
  draftModel: string;
  draftMax: string;
  cooldownS: string;
  cacheTypes: string;
  contextSize: string;
}

const number = (text: string): number | null => (text.trim() === '' ? null : Number(text));
const list = (text: string): string[] =>
  text
    .split(/[,\n]/)
    .map((item) => item.trim())
    .filter(Boolean);
const lines = (text: string): string[] =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);

const GATES: { gate: QualityGate; label: string }[] = [
  { gate: 'acceptance', label: 'acceptance' },
  { gate: 'token agreement', label: 'token agreement' },
  { gate: 'kld', label: 'KLD' },
];

export function initialExperimentForm(kind: Kind = 'quant', model = 'demo:f16'): ExperimentFormState {
  return {
    kind,
    model,
    source: 'quants',
    quants: 'f16,q8_0,q4_k_m',
    files: '',
    workload: EXPERIMENT_KIND_VIEWS[kind].defaultWorkload,
    repeats: String(EXPERIMENT_DEFAULTS.repeats),
    requestsPerWindow: kind === 'capacity' ? '' : String(EXPERIMENT_DEFAULTS.requestsPerWindow),
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
    sloTtft: '',
    sloTpot: '',
    sloE2e: '',
    coldStarts: '',
    skipCacheReset: false,
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
    contextSize: '',
  };
}

/** The spec `inferlab experiment KIND` would build from the same choices. */
export function experimentSpecFromForm(form: ExperimentFormState): StartExperimentSpec {
  const slo = { ttft_ms: number(form.sloTtft), tpot_ms: number(form.sloTpot), e2e_ms: number(form.sloE2e) };
  const sloEntries = Object.entries(slo).filter(([, value]) => value !== null);
  const sloSpec = sloEntries.length > 0 ? Object.fromEntries(sloEntries) : null;
  const quant = form.kind === 'quant';
  // The kinds whose recommendation passes quality gates: quantizations and KV cache types.
  const gated = quant || form.kind === 'kvcache';
  const byFiles = quant && form.source === 'files';
  const files = byFiles
    ? lines(form.files).map((line) => {
        const at = line.indexOf('=');
        return at < 0 ? { name: '', path: line } : { name: line.slice(0, at).trim(), path: line.slice(at + 1).trim() };
      })
    : null;
  return {
    kind: form.kind,
    model: byFiles ? '' : form.model.trim(),
    quants: quant && !byFiles ? list(form.quants) : [],
    files,
    workload: form.workload,
    // Left empty, a required number is sent as 0 so the check names the field instead of a default standing in.
    repeats: number(form.repeats) ?? 0,
    requestsPerWindow: form.kind === 'capacity' ? number(form.requestsPerWindow) : (number(form.requestsPerWindow) ?? 0),
    concurrency: form.kind === 'sweep' || form.kind === 'capacity' ? null : (number(form.concurrency) ?? 0),
    maxAnswerTokens: number(form.maxAnswerTokens),
    profileName: form.profileName,
    settings: lines(form.settings),
    constraints: gated
      ? {
          vramBudgetMib: number(form.vramBudgetMib),
          minAgreement: number(form.minAgreement),
          minAcceptance: number(form.minAcceptance),
          maxKld: number(form.maxKld),
          acceptanceAlpha: number(form.acceptanceAlpha),
          slo: sloSpec,
          ...(form.objective ? { objective: form.objective } : {}),
          ...(form.disabledGates.length > 0 ? { disabledGates: form.disabledGates } : {}),
        }
      : (form.kind === 'sweep' || form.kind === 'capacity') && sloSpec
        ? { vramBudgetMib: null, minAgreement: null, minAcceptance: null, slo: sloSpec }
        : null,
    kldTextFile: gated ? form.kldTextFile.trim() || null : null,
    coldStarts: form.kind === 'warmcold' ? number(form.coldStarts) : null,
    ...(form.kind === 'warmcold' && form.skipCacheReset ? { skipCacheReset: true } : {}),
    vary: form.kind === 'sweep' ? { field: form.varyField, values: list(form.varyValues) } : null,
    loadConcurrencies: form.kind === 'sweep' && list(form.loadConcurrencies).length > 0 ? list(form.loadConcurrencies).map(Number) : null,
    cooldownS: number(form.cooldownS),
    draftModel: form.kind === 'spec' ? form.draftModel.trim() : null,
    draftMax: form.kind === 'spec' ? list(form.draftMax).map(Number) : null,
    capacity:
      form.kind === 'capacity'
        ? {
            by: form.capacityBy,
            percentile: number(form.percentile) ?? 0,
            start: number(form.startLoad),
            maxLoad: number(form.maxLoad),
            keepCache: form.keepCache,
          }
        : null,
    kvCache: form.kind === 'kvcache' ? { types: list(form.cacheTypes), contextSize: number(form.contextSize) } : null,
  };
}

/**
 * Every experiment `inferlab experiment` can start, checked as it is filled in by the check
 * `experiments.start` applies (`experiments.validate`).
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
  const { workloads, profiles } = useRunChoices(client);
  const spec = useMemo(() => experimentSpecFromForm(form), [form]);
  const check = useCallback((candidate: StartExperimentSpec) => client.experiments.validate(candidate), [client]);
  const problem = useServiceCheck(check, spec);
  const set = <K extends keyof ExperimentFormState>(key: K, value: ExperimentFormState[K]) =>
    setForm((current) => ({ ...current, [key]: value }));
  const text = (key: keyof ExperimentFormState, label: string) => ({
    'aria-label': label,
    value: String(form[key]),
    onChange: (event: { target: { value: string } }) => set(key, event.target.value as never),
  });
  // A new preset from a model's actions replaces what was typed.
  useEffect(() => setForm(initial), [initial]);

  const kind = form.kind;
  return (
    <form
      className="run-form"
      aria-label="experiment options"
      onSubmit={(event) => {
        event.preventDefault();
        if (!problem) onStart(spec);
      }}
    >
      <fieldset>
        <legend>Experiment</legend>
        {EXPERIMENT_KIND_ORDER.map((option) => (
          <label key={option}>
            <input
              type="radio"
              name="experiment-kind"
              checked={kind === option}
              onChange={() =>
                setForm((current) => ({
                  ...current,
                  kind: option,
                  workload: EXPERIMENT_KIND_VIEWS[option].defaultWorkload,
                  // A capacity look takes what its percentile needs unless asked for more; the other kinds' window size is no guide.
                  requestsPerWindow:
                    option === 'capacity'
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
        {kind === 'quant' && (
          <>
            <label>
              <input type="radio" name="quant-source" checked={form.source === 'quants'} onChange={() => set('source', 'quants')} /> Made
              from one model
            </label>
            <label>
              <input type="radio" name="quant-source" checked={form.source === 'files'} onChange={() => set('source', 'files')} /> Files I
              have
            </label>
          </>
        )}
        {kind === 'quant' && form.source === 'files' ? (
          <label>
            Files, the first the baseline{' '}
            <textarea
              {...text('files', 'quant files')}
              rows={3}
              cols={48}
              placeholder={'one NAME=PATH per line, e.g.\nf16=/models/m-f16.gguf'}
            />
          </label>
        ) : (
          <ModelField client={client} value={form.model} onChange={(model) => set('model', model)} />
        )}
        {kind === 'quant' && form.source === 'quants' && (
          <label>
            Types, the first the baseline <input {...text('quants', 'quant types')} size={24} placeholder="f16,q8_0,q4_k_m" />
          </label>
        )}
        {kind === 'kvcache' && <KvCacheFields text={text} />}
        <NameSelectField
          label="Workload"
          ariaLabel="experiment workload"
          value={form.workload}
          items={workloads}
          onChange={(name) => set('workload', name)}
        />
      </fieldset>
      <fieldset>
        <legend>Design</legend>
        {kind !== 'capacity' && <NumberField label="Repeats" min={1} {...text('repeats', 'repeats')} />}
        <NumberField
          label={kind === 'sweep' ? 'Requests per condition' : kind === 'capacity' ? 'Requests per look' : 'Requests per window'}
          min={1}
          {...text('requestsPerWindow', 'requests per window')}
          placeholder={kind === 'capacity' ? 'what the percentile needs' : undefined}
        />
        {kind === 'capacity' && (
          <>
            <label>
              Load by{' '}
              <select
                aria-label="capacity by"
                value={form.capacityBy}
                onChange={(event) => {
                  const by = event.target.value as 'rate' | 'concurrency' | 'users';
                  // Users are conversations: switching to them picks the built-in conversations, and back.
                  setForm((current) => ({
                    ...current,
                    capacityBy: by,
                    workload: by === 'users' ? 'multi-turn-chat' : current.workload === 'multi-turn-chat' ? 'chat-short' : current.workload,
                  }));
                }}
              >
                <option value="rate">arrival rate (req/s, open loop)</option>
                <option value="concurrency">concurrency (closed loop)</option>
                <option value="users">concurrent users (conversations)</option>
              </select>
            </label>
            <NumberField label="Percentile" min={50} max={99.9} step="any" {...text('percentile', 'capacity percentile')} />
            <NumberField label="First load" min={0} step="any" {...text('startLoad', 'capacity start')} placeholder="1" />
            <NumberField label="Highest load" min={0} step="any" {...text('maxLoad', 'capacity max load')} placeholder="default" />
            <label>
              <input type="checkbox" checked={form.keepCache} onChange={(event) => set('keepCache', event.target.checked)} /> Keep the
              prompt cache between steps (the workload reuses prefixes)
            </label>
          </>
        )}
        {kind !== 'sweep' && kind !== 'capacity' && (
          <NumberField label="Concurrency" min={1} {...text('concurrency', 'experiment concurrency')} />
        )}
        <NumberField
          label="Cooldown between windows (s)"
          min={1}
          {...text('cooldownS', 'cooldown')}
          placeholder="none: GPU idle temperature and clocks"
        />
        <NumberField
          label="Max answer tokens"
          min={1}
          {...text('maxAnswerTokens', 'max answer tokens')}
          placeholder="as the workload says"
        />
        <NameSelectField
          label="Profile"
          ariaLabel="experiment profile"
          value={form.profileName}
          items={profiles}
          onChange={(name) => set('profileName', name)}
        />
        <label>
          Settings over the profile{' '}
          <textarea {...text('settings', 'experiment settings')} rows={2} placeholder="one FIELD=VALUE per line" />
        </label>
        {kind === 'warmcold' && (
          <>
            <NumberField label="Fresh server starts" min={1} {...text('coldStarts', 'cold starts')} placeholder="one per window" />
            <label>
              <input type="checkbox" checked={form.skipCacheReset} onChange={(event) => set('skipCacheReset', event.target.checked)} />{' '}
              Leave the prompt cache on in cold-cache (flagged as contaminated)
            </label>
          </>
        )}
        {kind === 'spec' && (
          <>
            <label>
              Draft model <input {...text('draftModel', 'draft model')} size={24} placeholder="demo:q4_k_m or a GGUF path" />
            </label>
            <label>
              Draft limits (tokens per step) <input {...text('draftMax', 'draft max')} size={12} placeholder="4,8,16" />
            </label>
          </>
        )}
        {kind === 'sweep' && (
          <>
            <label>
              Vary{' '}
              <select aria-label="vary field" value={form.varyField} onChange={(event) => set('varyField', event.target.value)}>
                {Object.entries(PROFILE_FIELD_HELP).map(([field, entry]) => (
                  <option key={field} value={field}>
                    {field} — {entry.label}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Values <input {...text('varyValues', 'vary values')} size={20} placeholder="256,512,1024" />
            </label>
            <label>
              Load (concurrency levels) <input {...text('loadConcurrencies', 'load concurrencies')} size={14} placeholder="1,4,16" />
            </label>
          </>
        )}
      </fieldset>
      {kind !== 'warmcold' && kind !== 'spec' && (
        <fieldset>
          <legend>{kind === 'quant' || kind === 'kvcache' ? 'Gates and recommendation' : 'SLO'}</legend>
          {(kind === 'quant' || kind === 'kvcache') && (
            <>
              <NumberField label="VRAM budget (MiB)" min={1} {...text('vramBudgetMib', 'vram budget')} />
              <NumberField
                label="Min token agreement"
                min={0}
                max={1}
                step="any"
                {...text('minAgreement', 'min agreement')}
                placeholder="0–1"
              />
              <NumberField label="Max KLD (nats)" min={0} step="any" {...text('maxKld', 'max kld')} />
              <NumberField label="Acceptance alpha" min={0} max={0.5} step="any" {...text('acceptanceAlpha', 'acceptance alpha')} />
              <NumberField
                label="Min acceptance"
                min={0}
                max={1}
                step="any"
                {...text('minAcceptance', 'min acceptance')}
                placeholder="0–1"
              />
              <span>
                Gates off:{' '}
                {GATES.map(({ gate, label }) => (
                  <label key={gate}>
                    <input
                      type="checkbox"
                      aria-label={`gate off ${label}`}
                      checked={form.disabledGates.includes(gate)}
                      onChange={(event) =>
                        set(
                          'disabledGates',
                          event.target.checked ? [...form.disabledGates, gate] : form.disabledGates.filter((entry) => entry !== gate),
                        )
                      }
                    />{' '}
                    {label}
                  </label>
                ))}
              </span>
              <label>
                Rank by{' '}
                <select
                  aria-label="objective"
                  value={form.objective}
                  onChange={(event) => set('objective', event.target.value as QuantObjective | '')}
                >
                  <option value="">default (memory)</option>
                  <option value="memory">memory</option>
                  <option value="tpot">TPOT</option>
                  <option value="ttft">TTFT</option>
                </select>
              </label>
              <label>
                KLD text file <input {...text('kldTextFile', 'kld text')} size={24} placeholder="generated by the baseline" />
              </label>
            </>
          )}
          <NumberField label="SLO TTFT (ms)" min={0} step="any" {...text('sloTtft', 'experiment slo ttft')} />
          <NumberField label="TPOT (ms)" min={0} step="any" {...text('sloTpot', 'experiment slo tpot')} />
          <NumberField label="E2E (ms)" min={0} step="any" {...text('sloE2e', 'experiment slo e2e')} />
        </fieldset>
      )}
      <p role="status" data-testid="experiment-problem" className={problem ? 'error' : 'empty'}>
        {problem ?? 'Ready to start.'}
      </p>
      <button type="submit" className="primary" disabled={running || problem !== null}>
        Start experiment
      </button>
    </form>
  );
}
