import { useCallback, useState } from 'react';

/**
 * A view's calls to main, with one error and one busy flag: `run(work, onResult)` clears the
 * error, awaits the call, hands its result on, and keeps the failure to show. Resolves true
 * when the call succeeded.
 */
export function useAction(): {
  error: Error | null;
  busy: boolean;
  run: <T>(work: () => Promise<T>, onResult?: (result: T) => void) => Promise<boolean>;
} {
  const [error, setError] = useState<Error | null>(null);
  const [busy, setBusy] = useState(false);
  const run = useCallback(async <T>(work: () => Promise<T>, onResult?: (result: T) => void): Promise<boolean> => {
    setError(null);
    setBusy(true);
    try {
      const result = await work();
      onResult?.(result);
      return true;
    } catch (reason) {
      setError(reason instanceof Error ? reason : new Error(String(reason)));
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  return { error, busy, run };
}
