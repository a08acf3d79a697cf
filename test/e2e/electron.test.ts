import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { _electron as electron } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/main/core/paths';
import { electronBinaryPath } from '../../src/main/doctor';

const binary = electronBinaryPath();
const NO_BINARY =
  "Electron's binary is not installed (its installer downloads it from outside the npm registry); install it with `node node_modules/electron/install.js` where that is reachable";

describe('Electron shell', () => {
  it('opens a sandboxed, context-isolated window that shows the system check', async (context) => {
    if (!binary) context.skip(NO_BINARY);
    const root = projectRoot();
    const build = spawnSync(process.execPath, [path.join(root, 'node_modules', 'electron-vite', 'bin', 'electron-vite.js'), 'build'], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(build.status, build.stderr).toBe(0);
    const app = await electron.launch({ executablePath: binary!, args: [root], cwd: root });
    try {
      const window = await app.firstWindow();
      await window.getByRole('heading', { name: 'System check' }).waitFor();
      await window.locator('tr[data-check="engine"]').waitFor({ timeout: 30_000 });
      // The preload (src/preload/index.ts) exposes one object with one function, and nothing of Node or ipcRenderer.
      const exposed = await window.evaluate(() => {
        const bridge = (globalThis as { inferlabDesktop?: Record<string, unknown> }).inferlabDesktop;
        return {
          require: typeof (globalThis as { require?: unknown }).require,
          process: typeof (globalThis as { process?: unknown }).process,
          ipcRenderer: typeof (globalThis as { ipcRenderer?: unknown }).ipcRenderer,
          bridge: bridge === undefined ? null : Object.fromEntries(Object.entries(bridge).map(([key, value]) => [key, typeof value])),
        };
      });
      expect(exposed).toEqual({
        require: 'undefined',
        process: 'undefined',
        ipcRenderer: 'undefined',
        bridge: { chooseModelFile: 'function' },
      });
      const preferences = await app.evaluate(({ BrowserWindow }) => {
        type Preferences = { contextIsolation?: boolean; sandbox?: boolean; nodeIntegration?: boolean };
        const contents = BrowserWindow.getAllWindows()[0]!.webContents as unknown as { getLastWebPreferences(): Preferences };
        const prefs = contents.getLastWebPreferences();
        return { contextIsolation: prefs.contextIsolation, sandbox: prefs.sandbox, nodeIntegration: prefs.nodeIntegration };
      });
      expect(preferences).toEqual({ contextIsolation: true, sandbox: true, nodeIntegration: false });
    } finally {
      await app.close();
    }
  });
});
