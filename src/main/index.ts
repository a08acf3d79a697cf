import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';
import readline from 'node:readline';
import { app, BrowserWindow, dialog, ipcMain, session } from 'electron';
import { projectRoot, userDataDir } from './core/paths';
import { loadWindowState, saveWindowState } from './window-state';
import { CHOOSE_MODEL_CHANNEL } from '../shared/desktop-bridge';
import { confineWindowContents, desktopWindowOptions, hardenSession, isFromService, isServiceUrl } from './desktop-shell';
import { encodeGrantRequest, parseGrantReply, type GrantReply } from './window-grants';

/**
 * The desktop app is a hardened window over the same local service `inferlab serve` provides.
 * The service runs as a child process on the Node that runs the CLI, so Electron's main process
 * loads no native module (better-sqlite3 is built for that Node, not for Electron). The child
 * gets a fresh credential for this launch only, and ends with the app: on quit it is stopped
 * (its servers with it), and if this process dies its stdin closes and it stops itself.
 */
let mainWindow: BrowserWindow | null = null;
let service: ChildProcess | null = null;
let serviceUrl: string | null = null;
const pendingGrants = new Map<number, (reply: GrantReply) => void>();
let nextGrantId = 1;
const windowStateFile = () => path.join(userDataDir(), 'window-state.json');

/** The Node that runs the CLI: handed over by `inferlab app`, else the one on PATH. */
function cliNode(): string {
  return process.env.INFERLAB_NODE || 'node';
}

/** Starts `inferlab serve --window` and resolves with the address it prints (carrying this launch's credential). */
function startService(): Promise<string> {
  const credential = crypto.randomBytes(24).toString('base64url');
  const env: NodeJS.ProcessEnv = { ...process.env, INFERLAB_WINDOW_TOKEN: credential };
  delete env.ELECTRON_RUN_AS_NODE;
  const child = spawn(cliNode(), [path.join(projectRoot(), 'bin', 'inferlab'), 'serve', '--window'], {
    env,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  service = child;
  return new Promise((resolve, reject) => {
    const lines = readline.createInterface({ input: child.stdout! });
    lines.once('line', (line) => {
      const url = line.trim();
      if (isServiceUrl(url, credential)) resolve(url);
      else reject(new Error(`the local service printed an unexpected address: ${url.slice(0, 200)}`));
      // After its address the service prints only the answers to grants.
      lines.on('line', (next) => {
        const reply = parseGrantReply(next);
        if (reply) pendingGrants.get(reply.id)?.(reply);
      });
    });
    child.once('error', (error) => reject(new Error(`could not start the local service with ${cliNode()}: ${error.message}`)));
    child.once('exit', (code) => reject(new Error(`the local service exited (status ${code}) before it was ready`)));
  });
}

/** Tells the service the person chose this file, and waits until it may be used. */
function grantModelFile(file: string): Promise<void> {
  const child = service;
  if (!child?.stdin || child.exitCode !== null) return Promise.reject(new Error('the local service is not running'));
  const id = nextGrantId++;
  return new Promise((resolve, reject) => {
    pendingGrants.set(id, (reply) => {
      pendingGrants.delete(id);
      if (reply.granted) resolve();
      else reject(new Error(reply.reason));
    });
    child.stdin!.write(encodeGrantRequest({ id, grant: 'model', path: file }));
  });
}

ipcMain.handle(CHOOSE_MODEL_CHANNEL, async (event) => {
  if (!serviceUrl || !isFromService(event.senderFrame?.url, serviceUrl)) throw new Error('refused: not a page of the local service');
  const options = {
    title: 'Choose a model',
    properties: ['openFile' as const],
    filters: [
      { name: 'GGUF models', extensions: ['gguf'] },
      { name: 'All files', extensions: ['*'] },
    ],
  };
  const chosen = mainWindow ? await dialog.showOpenDialog(mainWindow, options) : await dialog.showOpenDialog(options);
  const file = chosen.canceled ? undefined : chosen.filePaths[0];
  if (!file) return null;
  await grantModelFile(file);
  return file;
});

function createWindow(url: string): BrowserWindow {
  const state = loadWindowState(windowStateFile());
  const window = new BrowserWindow(
    desktopWindowOptions(state, app.isPackaged, path.join(import.meta.dirname, '..', 'preload', 'index.cjs')),
  );
  if (state.maximized) window.maximize();
  window.on('close', () => saveWindowState(windowStateFile(), { ...window.getNormalBounds(), maximized: window.isMaximized() }));
  confineWindowContents(window.webContents);
  void window.loadURL(url);
  return window;
}

void app.whenReady().then(async () => {
  hardenSession(session.defaultSession);
  try {
    serviceUrl = await startService();
    mainWindow = createWindow(serviceUrl);
    mainWindow.on('closed', () => (mainWindow = null));
  } catch (error) {
    dialog.showErrorBox(
      'Infer Lab could not start',
      `${(error as Error).message}\n\nThe same UI runs in a browser: ./bin/inferlab serve (it prints its address).`,
    );
    app.quit();
  }
});

app.on('window-all-closed', () => app.quit());

let stopping = false;
app.on('will-quit', (event) => {
  const child = service;
  if (stopping || !child || child.exitCode !== null) return;
  // The service stops its servers before it exits; the app waits for that, then quits.
  event.preventDefault();
  stopping = true;
  child.once('exit', () => app.quit());
  child.kill('SIGTERM');
});
