// A stand-in for the `electron` module, for loading the built desktop main process on plain
// Node (Electron's binary cannot be downloaded here). It records what the app asks of Electron.
import { EventEmitter } from 'node:events';

export const recorded = { loaded: [], errors: [], quit: false, csp: null };
globalThis.__electronStub = recorded;

class App extends EventEmitter {
  isPackaged = true;
  whenReady() {
    return Promise.resolve();
  }
  quit() {
    const event = {
      prevented: false,
      preventDefault() {
        this.prevented = true;
      },
    };
    this.emit('will-quit', event);
    if (!event.prevented) recorded.quit = true;
  }
}
export const app = new App();

export class BrowserWindow extends EventEmitter {
  constructor(options) {
    super();
    recorded.options = options;
    this.webContents = Object.assign(new EventEmitter(), {
      setWindowOpenHandler: (handler) => (recorded.openHandler = handler({ url: 'http://evil.example' })),
    });
  }
  loadURL(url) {
    recorded.loaded.push(url);
    return Promise.resolve();
  }
  maximize() {}
  getNormalBounds() {
    return { width: 800, height: 600, x: 0, y: 0 };
  }
  isMaximized() {
    return false;
  }
}

export const session = {
  defaultSession: {
    webRequest: {
      onHeadersReceived: (handler) =>
        handler({ responseHeaders: {} }, (result) => (recorded.csp = result.responseHeaders['Content-Security-Policy'])),
    },
    setPermissionRequestHandler: (handler) => handler(null, 'camera', (allowed) => (recorded.permission = allowed)),
  },
};

export const ipcMain = { handlers: new Map(), handle: (channel, handler) => ipcMain.handlers.set(channel, handler) };

// The person's choice in the native file dialog, played by the test.
export const dialog = {
  showErrorBox: (title, message) => recorded.errors.push(`${title}: ${message}`),
  showOpenDialog: async (...args) => {
    recorded.dialogOptions = args.at(-1);
    const file = process.env.ELECTRON_STUB_CHOSEN_FILE;
    return file ? { canceled: false, filePaths: [file] } : { canceled: true, filePaths: [] };
  },
};
export default { app, BrowserWindow, session, dialog, ipcMain };
