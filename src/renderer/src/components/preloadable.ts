import { createElement, lazy, type ComponentType } from 'react';

/**
 * A component whose code loads on demand, or earlier with `preload()`. Once loaded it renders at
 * once: React.lazy would suspend on every first render and reveal the view only after its
 * fallback throttle, long enough for a preset carried by the route (Serve's model) to be gone.
 */
export function preloadable<P extends object>(
  load: () => Promise<ComponentType<P>>,
): { View: ComponentType<P>; preload: () => Promise<Error | null>; isLoaded: () => boolean } {
  let loaded: ComponentType<P> | null = null;
  let pending: Promise<ComponentType<P>> | null = null;
  const fetch = () => (pending ??= load().then((component) => (loaded = component)));
  const Lazy = lazy(() => fetch().then((component) => ({ default: component })));
  const View = (props: P) => createElement((loaded ?? Lazy) as ComponentType<P>, props);
  return {
    View,
    isLoaded: () => loaded !== null,
    /** Resolves with the failure, if the code could not be loaded. */
    preload: () =>
      fetch().then(
        () => null,
        (reason: unknown) => {
          pending = null;
          return reason instanceof Error ? reason : new Error(String(reason));
        },
      ),
  };
}
