import { useEffect, useState } from 'react';
import type { View } from '../state/store';
import { VIEWS } from '../view-code';

/**
 * The open view's code: awaited here, outside Suspense, because React reveals a suspended first
 * render only after its fallback throttle (300 ms), which was most of the wait for the Runs view's
 * rows on a cold start (docs/PERFORMANCE.md). A load that fails is returned as its error; the
 * browser keeps a failed module import for the life of the page, so only a reload tries again.
 */
export function useViewCode(view: View): 'loaded' | 'loading' | Error {
  const code = VIEWS[view];
  const [failure, setFailure] = useState<{ view: View; error: Error } | null>(null);
  const [, loaded] = useState(0);
  useEffect(() => {
    if (code.isLoaded()) return;
    let current = true;
    void code.preload().then((error) => {
      if (!current) return;
      if (error) setFailure({ view, error });
      else loaded((count) => count + 1);
    });
    return () => {
      current = false;
    };
  }, [code, view]);
  if (code.isLoaded()) return 'loaded';
  return failure?.view === view ? failure.error : 'loading';
}
