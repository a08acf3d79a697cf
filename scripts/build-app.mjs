// Builds what the app runs — the CLI as JavaScript (out/cli), the desktop main process
// and the UI (out/main, out/renderer) — at `npm ci`, so that neither the
// CLI nor `serve` nor the desktop app needs a build tool at run time. An install without
// devDependencies skips it: the CLI then runs its TypeScript through tsx.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const tool = (...parts) => path.join(root, 'node_modules', ...parts);
if (!fs.existsSync(tool('electron-vite', 'bin', 'electron-vite.js')) || !fs.existsSync(tool('vite', 'bin', 'vite.js'))) {
  console.log('inferlab: build tools not installed (devDependencies omitted); the CLI will run from its TypeScript sources');
  process.exit(0);
}
for (const args of [
  [tool('electron-vite', 'bin', 'electron-vite.js'), 'build'],
  [tool('vite', 'bin', 'vite.js'), 'build', '--config', 'vite.cli.config.ts', '--logLevel', 'warn'],
]) {
  const result = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

// The workload schema compiled once, beside the parser thread's entry (src/main/workload/workload-validator.ts).
const cli = path.join(root, 'out', 'cli');
const { PREBUILT_VALIDATOR_FILE, workloadValidatorModuleSource } = await import(
  pathToFileURL(path.join(cli, 'workload-validator-source.mjs')).href
);
fs.writeFileSync(path.join(cli, PREBUILT_VALIDATOR_FILE), workloadValidatorModuleSource());
