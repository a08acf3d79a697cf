/**
 * The desktop window's hardening, kept apart from Electron so it can be tested on plain Node:
 * what the window may load, run and reach.
 */

/** The window shows only the local service's pages: its own scripts, no eval, no other host. */
export const DESKTOP_CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

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

/** The parts of a window's web contents that its confinement sets. */
export interface ConfinableContents {
  setWindowOpenHandler(handler: () => { action: 'deny' }): void;
  on(event: 'will-navigate', listener: (event: { preventDefault(): void }) => void): unknown;
}

/** The window stays on the page it was given: no new windows, no navigation (a link cannot swap the service's page for another). */
export function confineWindowContents(contents: ConfinableContents): void {
  contents.setWindowOpenHandler(() => ({ action: 'deny' }));
  contents.on('will-navigate', (event) => event.preventDefault());
}

type ResponseHeaders = Record<string, string | string[]>;

/** The parts of the window's session that its hardening sets. */
export interface HardenableSession {
  webRequest: {
    onHeadersReceived(
      listener: (
        details: { responseHeaders?: ResponseHeaders },
        callback: (response: { responseHeaders: ResponseHeaders }) => void,
      ) => void,
    ): void;
  };
  setPermissionRequestHandler(handler: (contents: unknown, permission: string, callback: (granted: boolean) => void) => void): void;
}

/**
 * Every response gets the desktop CSP, whatever the page's own headers say, and every permission
 * request (camera, notifications, …) is refused: the page needs none.
 */
export function hardenSession(session: HardenableSession): void {
  session.webRequest.onHeadersReceived((details, callback) =>
    callback({ responseHeaders: { ...details.responseHeaders, 'Content-Security-Policy': [DESKTOP_CONTENT_SECURITY_POLICY] } }),
  );
  session.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
}
