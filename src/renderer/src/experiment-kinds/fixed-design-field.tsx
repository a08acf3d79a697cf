import type { KindFieldProps } from './form-state';

/** The kinds that stop once their answer is decided offer the fixed design instead (the CLI's --fixed). */
export function FixedDesignField({ form, set }: Pick<KindFieldProps, 'form' | 'set'>) {
  return (
    <label>
      <input type="checkbox" checked={form.fixedDesign} onChange={(event) => set('fixedDesign', event.target.checked)} /> Run every window
      (fixed design) rather than stopping at the halfway look once the answer is decided
    </label>
  );
}
