import type { InputHTMLAttributes, ReactNode } from 'react';

/** What an empty field means: a word short enough to fit in it, and the whole meaning as its title. */
export interface FieldHint {
  short: string;
  meaning: string;
}

/**
 * A labelled number input, as every form lays one out. The input keeps its own aria-label, the
 * name the tests and screen readers find it by, so the visible label is free to change.
 */
export function NumberField({
  label,
  hint,
  ...input
}: { label: ReactNode; hint?: FieldHint } & Omit<InputHTMLAttributes<HTMLInputElement>, 'type'>) {
  return (
    <label>
      {label} <input type="number" {...input} {...(hint && { placeholder: hint.short, title: hint.meaning })} />
    </label>
  );
}
