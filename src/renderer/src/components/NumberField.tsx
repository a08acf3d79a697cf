import type { InputHTMLAttributes, ReactNode } from 'react';

/**
 * A labelled number input, as every form lays one out. The input keeps its own aria-label, the
 * name the tests and screen readers find it by, so the visible label is free to change.
 */
export function NumberField({ label, ...input }: { label: ReactNode } & Omit<InputHTMLAttributes<HTMLInputElement>, 'type'>) {
  return (
    <label>
      {label} <input type="number" {...input} />
    </label>
  );
}
