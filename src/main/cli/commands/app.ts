import { spawn } from 'node:child_process';
import path from 'node:path';
import { projectRoot } from '../../core/paths';
import { electronBinaryPath } from '../../doctor';
import type { CommandHandler } from '../args';

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
  const root = projectRoot();
  const child = spawn(process.execPath, [path.join(root, 'node_modules', 'electron-vite', 'bin', 'electron-vite.js'), 'preview'], { cwd: root, stdio: 'inherit' });
  return new Promise((resolve) => child.on('close', (code) => resolve(code ?? 1)));
};
