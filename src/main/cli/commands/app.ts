import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../core/paths';
import { electronBinaryPath } from '../../doctor';
import type { CommandHandler } from '../args';
import { builtAppFile } from '../built-app';

const BROWSER_INSTEAD = 'Meanwhile the same UI runs in a browser: ./bin/inferlab serve (it prints its address).\n';

/**
 * Electron's binary, fetched on first use by Electron's own installer (npm 11 never runs it at
 * install, by `allowScripts`; offline it would fail the whole install). Null, with what to do
 * printed, when it cannot be had.
 */
function electronBinary(root: string): string | null {
  const present = electronBinaryPath(root);
  if (present) return present;
  const installer = path.join(root, 'node_modules', 'electron', 'install.js');
  if (!fs.existsSync(installer)) {
    process.stderr.write(
      `Electron's binary is not installed, and neither is its package (node_modules/electron).\nRun npm install in ${root} where the npm registry is reachable, then npm start.\n${BROWSER_INSTEAD}`,
    );
    return null;
  }
  process.stderr.write("Electron's binary is not installed yet: fetching it once with Electron's own installer (about 100 MB)…\n");
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.ELECTRON_SKIP_BINARY_DOWNLOAD;
  const fetched = spawnSync(process.execPath, [installer], {
    cwd: path.dirname(installer),
    env,
    stdio: ['ignore', 'inherit', 'pipe'],
    encoding: 'utf8',
    timeout: 20 * 60_000,
  });
  const binary = electronBinaryPath(root);
  if (binary) return binary;
  const reason = (fetched.stderr || fetched.error?.message || `the installer exited with status ${fetched.status}`)
    .split('\n')
    .filter((line) => line.trim() !== '' && !/^\s*at /.test(line))
    .slice(-2)
    .map((line) => line.trim())
    .join('\n  ');
  process.stderr.write(
    `Electron's binary is not installed: the download failed (offline, or GitHub unreachable):\n  ${reason}\n` +
      `Where the network allows, run: node node_modules/electron/install.js (a mirror can be set with ELECTRON_MIRROR), then npm start.\n${BROWSER_INSTEAD}`,
  );
  return null;
}

export const appCommand: CommandHandler = async () => {
  const root = projectRoot();
  const electron = electronBinary(root);
  if (!electron) return 1;
  // Electron starts the package's "main" (out/main/index.js), built at install and rebuilt only when sources changed.
  builtAppFile('main');
  builtAppFile('preload');
  // The window's service runs on this Node (the one better-sqlite3 was built for), not inside Electron.
  const child = spawn(electron, [root], { cwd: root, stdio: 'inherit', env: { ...process.env, INFERLAB_NODE: process.execPath } });
  return new Promise((resolve) => child.on('close', (code) => resolve(code ?? 1)));
};
