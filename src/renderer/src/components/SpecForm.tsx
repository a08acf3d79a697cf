import type { ReactNode } from 'react';

/** A form that starts something from its spec: submitting starts it, unless the check found a problem. */
export function SpecForm({
  label,
  problem,
  onSubmit,
  children,
}: {
  label: string;
  problem: string | null;
  onSubmit: () => void;
  children: ReactNode;
}) {
  return (
    <form
      className="run-form"
      aria-label={label}
      onSubmit={(event) => {
        event.preventDefault();
        if (!problem) onSubmit();
      }}
    >
      {children}
    </form>
  );
}
