import { useEffect, useState } from 'react';

/**
 * The service's own check of a spec as it is being filled in: asked a moment after the last
 * change, and only the answer for the spec as it stands counts (an older check that answers
 * late is dropped). Resolves to the problem that would refuse the spec, or null.
 */
export function useServiceCheck<S>(check: (spec: S) => Promise<{ problem: string | null }>, spec: S): string | null {
  const [problem, setProblem] = useState<string | null>(null);
  useEffect(() => {
    let current = true;
    const timer = setTimeout(
      () =>
        void check(spec).then(
          (result) => current && setProblem(result.problem),
          (error: Error) => current && setProblem(error.message),
        ),
      250,
    );
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [check, spec]);
  return problem;
}
