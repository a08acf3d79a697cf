/**
 * Where the UI is, as a URL fragment, so a view, a run, a comparison or an experiment can be
 * reloaded, bookmarked and linked: `#/runs/ID`, `#/compare?ids=A,B`, `#/experiments/ID`,
 * `#/run?model=M`, `#/experiments?new=quant&model=M`, `#/history?metric=tpot_ms:p50`, `#/race?lanes=A:0,B:0`.
 */
export const VIEWS = [
  'home',
  'models',
  'server',
  'workloads',
  'run',
  'runs',
  'compare',
  'experiments',
  'settings',
  'history',
  'race',
] as const;
export type View = (typeof VIEWS)[number];

export interface Route {
  view: View;
  /** The run or experiment shown, for views that show one. */
  id: string | null;
  params: Record<string, string>;
}

export const routeOf = (view: View, id: string | null = null, params: Record<string, string> = {}): Route => ({ view, id, params });

const isView = (text: string): text is View => (VIEWS as readonly string[]).includes(text);

/** The route a fragment names, or null for one that names no view (the last view is kept then). */
export function parseRoute(hash: string): Route | null {
  const match = /^#\/([a-z]+)(?:\/([^?/]+))?(?:\?(.*))?$/.exec(hash);
  if (!match || !isView(match[1]!)) return null;
  const params: Record<string, string> = {};
  for (const [key, value] of new URLSearchParams(match[3] ?? '')) params[key] = value;
  let id: string | null = null;
  if (match[2]) {
    try {
      id = decodeURIComponent(match[2]);
    } catch {
      return null;
    }
  }
  return { view: match[1], id, params };
}

export function routeHash(route: Route): string {
  const query = new URLSearchParams(route.params).toString();
  return `#/${route.view}${route.id ? `/${encodeURIComponent(route.id)}` : ''}${query ? `?${query}` : ''}`;
}
