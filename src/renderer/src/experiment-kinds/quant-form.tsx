import type { ExperimentKindForm, KindFieldProps } from './form-state';
import { lines, list } from './form-state';
import { FixedDesignField } from './fixed-design-field';

/** What a quant experiment compares: types made from one model, or files the user has. */
function QuantSubject({ form, set, text, modelField }: KindFieldProps) {
  return (
    <>
      <label>
        <input type="radio" name="quant-source" checked={form.source === 'quants'} onChange={() => set('source', 'quants')} /> Made from one
        model
      </label>
      <label>
        <input type="radio" name="quant-source" checked={form.source === 'files'} onChange={() => set('source', 'files')} /> Files I have
      </label>
      {form.source === 'files' ? (
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
        <>
          {modelField}
          <label>
            Types, the first the baseline <input {...text('quants', 'quant types')} size={24} placeholder="f16,q8_0,q4_k_m" />
          </label>
        </>
      )}
    </>
  );
}

export const QUANT_FORM: ExperimentKindForm<'quant'> = {
  Subject: QuantSubject,
  Design: FixedDesignField,
  constraints: 'gates',
  // The types are made from 16-bit weights.
  presetModel: 'demo:f16',
  // #/experiments?new=quant&files=NAME=PATH… (the Models view's "Compare these" after a pull) compares those files.
  fromRoute: (params) => (params.files ? { source: 'files', files: params.files } : {}),
  specFields: (form) => {
    const design = form.fixedDesign ? { fixed: true } : {};
    if (form.source === 'quants') return { quants: list(form.quants), ...design };
    const files = lines(form.files).map((line) => {
      const at = line.indexOf('=');
      return at < 0 ? { name: '', path: line } : { name: line.slice(0, at).trim(), path: line.slice(at + 1).trim() };
    });
    return { model: '', files, ...design };
  },
};
