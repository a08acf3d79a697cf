import { PROFILE_FIELD_HELP } from '../../../shared/profile-fields';
import type { ExperimentKindForm, KindFieldProps } from './form-state';
import { list } from './form-state';

function SweepDesign({ form, set, text }: KindFieldProps) {
  return (
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
    };
  },
};
