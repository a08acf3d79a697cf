import { spawn } from 'node:child_process';
import { projectRoot } from '../../core/paths';
import { electronBinaryPath } from '../../doctor';
import type { CommandHandler } from '../args';
import { builtAppFile } from '../built-app';

export const appCommand: CommandHandler = async () => {
  const electron = electronBinaryPath();
  if (!electron) {
    process.stderr.write(
      "Electron's binary is not installed (its installer downloads it from outside the npm registry, which this machine cannot reach).\n" +
        'On a machine with internet access run: node node_modules/electron/install.js, then npm start.\n' +
        'Meanwhile the same UI runs in a browser: ./bin/inferlab serve (prints its URL).\n',
    );
    return 1;
  }
  // Electron starts the package's "main" (out/main/index.js), built at install.
  builtAppFile('main');
  const root = projectRoot();
  // The window's service runs on this Node (the one better-sqlite3 was built for), not inside Electron.
  const child = spawn(electron, [root], { cwd: root, stdio: 'inherit', env: { ...process.env, INFERLAB_NODE: process.execPath } });
  return new Promise((resolve) => child.on('close', (code) => resolve(code ?? 1)));
};
