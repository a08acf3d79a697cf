import path from 'node:path';
import { app, BrowserWindow, session } from 'electron';
import { userDataDir } from './core/paths';
import { RpcDispatcher } from './rpc/dispatcher';
import { loadWindowState, saveWindowState } from './window-state';
import { createServices } from './services';
import { registerIpcTransport, sendEvent } from './transport/ipc';

// Content served to the window: the bundled renderer only, no remote content, no eval.
const CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

let mainWindow: BrowserWindow | null = null;
const containerReady = createServices();

const windowStateFile = () => path.join(userDataDir(), 'window-state.json');

/** electron-vite's dev server, honoured only in an unpackaged app and only on loopback: a packaged window never loads a URL from the environment. */
function developmentRendererUrl(): string | null {
  const raw = process.env.ELECTRON_RENDERER_URL;
  if (app.isPackaged || !raw) return null;
  try {
    const url = new URL(raw);
    return url.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname) ? url.toString() : null;
  } catch {
    return null;
  }
}

function createWindow(): BrowserWindow {
  const state = loadWindowState(windowStateFile());
  const window = new BrowserWindow({
    width: state.width,
    height: state.height,
    x: state.x,
    y: state.y,
    title: 'Infer Lab',
    webPreferences: {
      preload: path.join(import.meta.dirname, '../preload/index.cjs'),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
      // DevTools would let anyone at the window run code with the page's bridge; development builds only.
      devTools: !app.isPackaged,
    },
  });
  if (state.maximized) window.maximize();
  window.on('close', () => saveWindowState(windowStateFile(), { ...window.getNormalBounds(), maximized: window.isMaximized() }));
  window.webContents.setWindowOpenHandler(() => ({ action: 'deny' }));
  window.webContents.on('will-navigate', (event) => event.preventDefault());
  const devServer = developmentRendererUrl();
  if (devServer) void window.loadURL(devServer);
  else void window.loadFile(path.join(import.meta.dirname, '../renderer/index.html'));
  return window;
}

void app.whenReady().then(async () => {
  session.defaultSession.webRequest.onHeadersReceived((details, callback) => {
    callback({ responseHeaders: { ...details.responseHeaders, 'Content-Security-Policy': [CONTENT_SECURITY_POLICY] } });
  });
  session.defaultSession.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
  const container = await containerReady;
  registerIpcTransport(new RpcDispatcher(container.services), (sender) => sender === mainWindow?.webContents);
  container.events.on((event) => {
    if (mainWindow) sendEvent(mainWindow.webContents, event.name, event.payload);
  });
  mainWindow = createWindow();
  mainWindow.on('closed', () => (mainWindow = null));
});

app.on('window-all-closed', () => app.quit());

let disposed = false;
app.on('will-quit', (event) => {
  if (disposed) return;
  // Stop everything the app started (servers included) before the process exits.
  event.preventDefault();
  disposed = true;
  void containerReady.then((container) => container.dispose()).finally(() => app.quit());
});
