/**
 * The desktop window's hardening, kept apart from Electron so it can be tested on plain Node:
 * what the window may load, run and reach.
 */

/** The window shows only the local service's pages: its own scripts, no eval, no other host. */
export const DESKTOP_CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

/** The address `inferlab serve --window` prints: loopback, this launch's credential, nothing else. */
export function isServiceUrl(raw: string, credential: string): boolean {
  try {
    const url = new URL(raw);
    return (
      url.protocol === 'http:' &&
      url.hostname === '127.0.0.1' &&
      url.pathname === '/' &&
      url.searchParams.get('token') === credential &&
      [...url.searchParams.keys()].length === 1
    );
  } catch {
    return false;
  }
}

export interface WindowBounds {
  width: number;
  height: number;
  x?: number;
  y?: number;
}

/** BrowserWindow options: no Node, no preload bridge, sandboxed and isolated; DevTools only when unpackaged. */
export function desktopWindowOptions(bounds: WindowBounds, packaged: boolean) {
  return {
    width: bounds.width,
    height: bounds.height,
    x: bounds.x,
    y: bounds.y,
    title: 'Infer Lab',
    webPreferences: {
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
      // DevTools would let anyone at the window run code as the page; development builds only.
      devTools: !packaged,
    },
  };
}
