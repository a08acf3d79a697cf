import type { ExperimentKindForm, KindFieldProps } from './form-state';
import { list } from './form-state';
import { FixedDesignField } from './fixed-design-field';

function SpecDesign({ form, set, text }: KindFieldProps) {
  return (
    <>
      <label>
        Draft model <input {...text('draftModel', 'draft model')} size={24} placeholder="demo:q4_k_m or a GGUF path" />
      </label>
      <label>
        Draft limits (tokens per step) <input {...text('draftMax', 'draft max')} size={12} placeholder="4,8,16" />
      </label>
      <FixedDesignField form={form} set={set} />
    </>
  );
}

export const SPECULATIVE_FORM: ExperimentKindForm<'speculative'> = {
  Design: SpecDesign,
  constraints: 'none',
  specFields: (form) => ({
    draftModel: form.draftModel.trim(),
    draftMax: list(form.draftMax).map(Number),
    ...(form.fixedDesign ? { fixed: true } : {}),
  }),
};
