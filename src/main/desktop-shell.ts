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

/** Whether an IPC message comes from a page of the local service (the token is gone from the address once it is a cookie). */
export function isFromService(frameUrl: string | undefined, serviceUrl: string): boolean {
  try {
    return frameUrl !== undefined && new URL(frameUrl).origin === new URL(serviceUrl).origin;
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

/**
 * BrowserWindow options: no Node, sandboxed and isolated, a preload that offers only the model
 * file dialog; DevTools only when unpackaged.
 */
export function desktopWindowOptions(bounds: WindowBounds, packaged: boolean, preload: string) {
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
      preload,
      // DevTools would let anyone at the window run code as the page; development builds only.
      devTools: !packaged,
    },
  };
}
