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
  const loadedAtRender = code.isLoaded();
  // Set when a load settles, so the view renders again: the error where it failed.
  const [settled, setSettled] = useState<{ view: View; error: Error | null } | null>(null);
  useEffect(() => {
    // Keyed on what this render saw, not on isLoaded() now: the code may arrive between the render
    // and this effect (it starts loading before the shell, open-view-early.ts), and a render that
    // drew 'loading' needs the update that draws the view.
    if (loadedAtRender) return;
    let current = true;
    void code.preload().then((error) => current && setSettled({ view, error }));
    return () => {
      current = false;
    };
  }, [code, view, loadedAtRender]);
  if (loadedAtRender) return 'loaded';
  return (settled?.view === view && settled.error) || 'loading';
}
