import type { ComponentType, Dispatch, ReactNode, SetStateAction } from 'react';
import type { ExperimentKind, ExperimentSpecOf, QualityGate, QuantObjective } from '../../../shared/contract';
import type { SloText } from '../components/SloFields';
import type { FieldHint } from '../components/NumberField';

/** The experiment form's own state: text as typed; the spec is derived from it, the way the CLI's flags build it. */
export interface ExperimentFormState {
  kind: ExperimentKind;
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
  slo: SloText;
  coldStarts: string;
  skipCacheReset: boolean;
  fixedDesign: boolean;
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
  adapters: string;
  adapterServing: 'own' | 'swapped' | 'both';
}

/** A number as typed, or null for an empty field. */
export const number = (text: string): number | null => (text.trim() === '' ? null : Number(text));

/** Items separated by commas or lines. */
export const list = (text: string): string[] =>
  text
    .split(/[,\n]/)
    .map((item) => item.trim())
    .filter(Boolean);

export const lines = (text: string): string[] =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);

/** A text input bound to one field of the form, with the label tests and screen readers find it by. */
export type FormText = (
  key: keyof ExperimentFormState,
  label: string,
) => { 'aria-label': string; value: string; onChange: (event: { target: { value: string } }) => void };

/** What a kind's fields are handed by the form. */
export interface KindFieldProps {
  form: ExperimentFormState;
  set: <K extends keyof ExperimentFormState>(key: K, value: ExperimentFormState[K]) => void;
  setForm: Dispatch<SetStateAction<ExperimentFormState>>;
  text: FormText;
  /** The shared model picker, for a kind that places it among its own fields. */
  modelField: ReactNode;
}

/** One experiment kind in the form: its own fields, which shared ones apply, and the spec fields it sets. */
export interface ExperimentKindForm<K extends ExperimentKind = ExperimentKind> {
  /** What is compared, in place of the model picker (which it receives to place itself). */
  Subject?: ComponentType<KindFieldProps>;
  /** Its own design fields, after the shared ones. */
  Design?: ComponentType<KindFieldProps>;
  /** Shared design fields it does not use, and how it names its window. */
  design?: {
    repeats?: false;
    concurrency?: false;
    requestsLabel?: string;
    requestsHint?: FieldHint;
    requestsOptional?: true;
  };
  /** The recommendation's gates with an SLO (quant, kvcache), an SLO alone (sweep, capacity), or neither. */
  constraints: 'gates' | 'slo' | 'none';
  specFields: (form: ExperimentFormState) => Partial<ExperimentSpecOf<K>>;
  /** The model the form opens on when the address names none (the demo's q8_0 otherwise). */
  presetModel?: string;
  /** What the address (`#/experiments?new=KIND&…`) fills in beyond the model. */
  fromRoute?: (params: Record<string, string>) => Partial<ExperimentFormState>;
}
