import { Suspense, useEffect, useMemo, type ComponentType } from 'react';
import type { AppEvents, AppServices, EventName } from '../../shared/contract';
import { createClient, subscribe, type RpcBridge } from './api/client';
import { ErrorBox } from './components/ErrorBox';
import { useAction } from './hooks/use-action';
import { EVENT_SLICES, useAppStore, type View } from './state/store';
import { parseRoute, routeHash } from './state/route';
import { VIEWS } from './view-code';
import { usePreloadedViews, useViewCode } from './use-view-code';

const NAVIGATION: { view: View; label: string }[] = [
  { view: 'home', label: 'Home' },
  { view: 'models', label: 'Models' },
  { view: 'server', label: 'Server' },
  { view: 'workloads', label: 'Workloads' },
  { view: 'run', label: 'Run' },
  { view: 'runs', label: 'Runs' },
  { view: 'compare', label: 'Compare' },
  { view: 'experiments', label: 'Experiments' },
  { view: 'settings', label: 'Settings' },
  // Last, so the views before it keep their Alt+digit; Alt+0 opens it.
  { view: 'history', label: 'History' },
  // A race is opened from Compare with stored runs, or here to measure one now.
  { view: 'race', label: 'Race' },
];

export function App({ bridge }: { bridge: RpcBridge | null }) {
  const client = useMemo(() => (bridge ? createClient(bridge) : null), [bridge]);
  const view = useAppStore((state) => state.view);
  const OpenView: ComponentType<{ client: AppServices }> = VIEWS[view].View;
  const openCode = useViewCode(view);
  const route = useAppStore((state) => state.route);
  const theme = useAppStore((state) => state.theme);
  const { setView, toggleTheme } = useAppStore.getState();
  const settingsRead = useAction();
  usePreloadedViews();

  useEffect(() => {
    document.documentElement.dataset.theme = theme;
  }, [theme]);

  // The URL fragment and the route follow each other: a link or a reload opens what it names, and
  // moving around updates the address (one history entry per move, so Back works).
  useEffect(() => {
    const follow = () => {
      const named = parseRoute(window.location.hash);
      if (named && routeHash(named) !== routeHash(useAppStore.getState().route)) useAppStore.getState().navigate(named);
    };
    follow();
    window.addEventListener('hashchange', follow);
    return () => window.removeEventListener('hashchange', follow);
  }, []);
  useEffect(() => {
    const hash = routeHash(route);
    if (window.location.hash !== hash) window.location.hash = hash;
  }, [route]);

  // The saved settings (name for decisions, default profile) apply from the start, in every view;
  // when they cannot be read, the person is told that the defaults stand in for them.
  useEffect(() => {
    if (client)
      void settingsRead.run(
        () => client.settings.get(),
        (settings) => useAppStore.getState().applySettings(settings),
      );
  }, [client, settingsRead.run]);

  useEffect(() => {
    if (!bridge) return;
    const names = Object.keys(EVENT_SLICES) as EventName[];
    const unsubscribe = names.map((name) => subscribe(bridge, name, EVENT_SLICES[name] as (payload: AppEvents[typeof name]) => void));
    return () => unsubscribe.forEach((stop) => stop());
  }, [bridge]);

  // Alt+1…9 and 0 switch views; Alt+T toggles the theme. Keys by their position (event.code): on macOS,
  // Option+1 types "¡" and event.key never reads "1".
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (!event.altKey) return;
      const digit = /^(?:Digit|Numpad)([0-9])$/.exec(event.code);
      const index = digit ? (Number(digit[1]) + 9) % 10 : -1;
      if (index >= 0 && index < NAVIGATION.length) {
        setView(NAVIGATION[index]!.view);
        event.preventDefault();
      } else if (event.code === 'KeyT') {
        toggleTheme();
        event.preventDefault();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [setView, toggleTheme]);

  if (!client) {
    return (
      <main>
        <p role="alert" className="error">
          No connection to Infer Lab's main process. Start the app with npm start or ./bin/inferlab serve.
        </p>
      </main>
    );
  }
  return (
    <div className="shell">
      <nav aria-label="Main">
        <span className="brand">Infer Lab</span>
        {NAVIGATION.map((item, index) => (
          <button
            key={item.view}
            type="button"
            aria-current={view === item.view ? 'page' : undefined}
            title={index < 10 ? `Alt+${(index + 1) % 10}` : undefined}
            onClick={() => setView(item.view)}
          >
            {item.label}
          </button>
        ))}
        <button type="button" className="theme" onClick={toggleTheme} title="Alt+T">
          {theme === 'dark' ? 'Light theme' : 'Dark theme'}
        </button>
      </nav>
      <main>
        {settingsRead.error && (
          <p className="error">Your saved settings (name for decisions, default profile) could not be read; the defaults apply.</p>
        )}
        <ErrorBox error={settingsRead.error} />
        {openCode === 'loaded' ? (
          <Suspense fallback={<p aria-busy="true">Loading…</p>}>
            <OpenView client={client} />
          </Suspense>
        ) : openCode === 'loading' ? (
          <p aria-busy="true">Loading…</p>
        ) : (
          <div role="alert" className="error-box">
            <p>
              This view's code could not be loaded: {openCode.message}. Is <code>inferlab serve</code> (or the app) still running?
            </p>
            <button type="button" onClick={() => window.location.reload()}>
              Reload
            </button>
          </div>
        )}
      </main>
    </div>
  );
}
