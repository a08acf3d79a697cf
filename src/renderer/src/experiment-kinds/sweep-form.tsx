import { PROFILE_FIELD_HELP } from '../../../shared/profile-fields';
import { isSweepWorkloadField, SWEEP_WORKLOAD_FIELDS } from '../../../shared/contract/experiment-kinds/sweep';
import { DEFAULT_EXPERIMENT_WORKLOAD } from '../../../shared/contract/experiment-kinds/registry';
import type { ExperimentKindForm, KindFieldProps } from './form-state';
import { list } from './form-state';
import { FixedDesignField } from './fixed-design-field';

/** The workload a sweep runs after its field changes: a workload field's own built-in, and back to the sweep's default on leaving it. */
function workloadFor(field: string, current: string): string {
  if (isSweepWorkloadField(field)) return SWEEP_WORKLOAD_FIELDS[field].workload;
  const left = Object.values(SWEEP_WORKLOAD_FIELDS).some((entry) => entry.workload === current);
  return left ? DEFAULT_EXPERIMENT_WORKLOAD.sweep : current;
}

function SweepDesign({ form, set, setForm, text }: KindFieldProps) {
  return (
    <>
      <label>
        Vary{' '}
        <select
          aria-label="vary field"
          value={form.varyField}
          onChange={(event) => {
            const field = event.target.value;
            setForm((current) => ({ ...current, varyField: field, workload: workloadFor(field, current.workload) }));
          }}
        >
          {Object.entries(PROFILE_FIELD_HELP).map(([field, entry]) => (
            <option key={field} value={field}>
              {field} — {entry.label}
            </option>
          ))}
          {Object.entries(SWEEP_WORKLOAD_FIELDS).map(([field, entry]) => (
            <option key={field} value={field}>
              {field} — {entry.label} (workload {entry.workload})
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
      <FixedDesignField form={form} set={set} />
    </>
  );
}

export const SWEEP_FORM: ExperimentKindForm<'sweep'> = {
  Design: SweepDesign,
  design: { concurrency: false, requestsLabel: 'Requests per condition' },
  constraints: 'slo',
  specFields: (form) => {
    const levels = list(form.loadConcurrencies);
    return {
      vary: { field: form.varyField, values: list(form.varyValues) },
      loadConcurrencies: levels.length > 0 ? levels.map(Number) : null,
      ...(form.fixedDesign ? { fixed: true } : {}),
    };
  },
};
