import { useEffect, useState } from 'react';
import { preloadCharts } from './components/Chart';
import { useAppStore, type View } from './state/store';
import { VIEWS } from './view-code';

// The first paint carries the shell and the open view; the other views load right after it,
// so none is fetched at the moment it is opened (a preset such as Serve's model must find its view mounted).
const PRELOAD_AFTER_MS = 2000;

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

/**
 * Loads the views' code before it is asked for: Compare and the charts once two runs are picked
 * (here, in the shell, so that no view imports the list of views it is in), and every view after
 * the first paint.
 */
export function usePreloadedViews(): void {
  // Two runs picked: Compare is likely next, so its code and the chart code load now, not after the click.
  const canCompare = useAppStore((state) => state.compareSelection.length >= 2);
  useEffect(() => {
    if (!canCompare) return;
    void VIEWS.compare.preload();
    void preloadCharts();
  }, [canCompare]);

  useEffect(() => {
    // Two seconds in, when the browser is idle: the other views, then the chart code, so the first chart a view draws
    // does not wait for it. Sooner, their fetch and parse (ECharts is 620 KB minified) compete with the open view's own code and
    // data: in Chromium here the Runs view drew its rows 0.3 s later when they started at the first idle moment.
    const preload = () => {
      Object.values(VIEWS).forEach((view) => void view.preload());
      void preloadCharts();
    };
    let idle: number | null = null;
    const timer = setTimeout(() => {
      if (typeof window.requestIdleCallback === 'function') idle = window.requestIdleCallback(preload, { timeout: 3000 });
      else preload();
    }, PRELOAD_AFTER_MS);
    return () => {
      clearTimeout(timer);
      if (idle !== null) window.cancelIdleCallback(idle);
    };
  }, []);
}
