import { NumberField } from '../components/NumberField';
import type { ExperimentKindForm, KindFieldProps } from './form-state';
import { number } from './form-state';
import { FixedDesignField } from './fixed-design-field';

function WarmColdDesign({ form, set, text }: KindFieldProps) {
  return (
    <>
      <NumberField label="Fresh server starts" min={1} {...text('coldStarts', 'cold starts')} placeholder="one per window" />
      <label>
        <input type="checkbox" checked={form.skipCacheReset} onChange={(event) => set('skipCacheReset', event.target.checked)} /> Leave the
        prompt cache on in cold-cache (flagged as contaminated)
      </label>
      <FixedDesignField form={form} set={set} />
    </>
  );
}

export const WARMCOLD_FORM: ExperimentKindForm<'warmcold'> = {
  Design: WarmColdDesign,
  constraints: 'none',
  specFields: (form) => ({
    coldStarts: number(form.coldStarts),
    ...(form.skipCacheReset ? { skipCacheReset: true } : {}),
    ...(form.fixedDesign ? { fixed: true } : {}),
  }),
};
