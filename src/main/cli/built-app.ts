import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { projectRoot } from '../core/paths';

/** What `npm ci` and `npm run build` put under out/: the window's main process and the UI. */
const OUTPUTS = { renderer: 'renderer/index.html', main: 'main/index.js', preload: 'preload/index.cjs' } as const;

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(full) : fs.statSync(full).mtimeMs);
  }
  return newest;
}

/**
 * The built part of the app. An installed copy runs what was built at install and needs no
 * build tool; only a source checkout whose sources changed since the build rebuilds, with its
 * own devDependencies, so an edit is never shadowed by a stale UI.
 */
export function builtAppFile(part: keyof typeof OUTPUTS): string {
  const root = projectRoot();
  const file = path.join(root, 'out', OUTPUTS[part]);
  const sources = ['src/renderer', 'src/main', 'src/shared', 'src/preload']
    .map((folder) => path.join(root, folder))
    .filter((folder) => fs.existsSync(folder));
  const builder = path.join(root, 'node_modules', 'electron-vite', 'bin', 'electron-vite.js');
  const stale = !fs.existsSync(file) || (sources.length > 0 && fs.statSync(file).mtimeMs < Math.max(...sources.map(newestMtime)));
  if (!stale) return file;
  if (sources.length === 0 || !fs.existsSync(builder)) {
    if (fs.existsSync(file)) return file;
    throw new AppError(ErrorCode.Internal, `The app is not built (${path.relative(root, file)} is missing). Run npm run build in ${root}.`);
  }
  process.stderr.write('building the app (sources changed since the last build)…\n');
  const build = spawnSync(process.execPath, [builder, 'build'], { cwd: root, encoding: 'utf8' });
  if (build.status !== 0) throw new AppError(ErrorCode.Internal, `Building the app failed:\n${build.stderr || build.stdout}`);
  return file;
}
