import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { projectRoot } from '../../src/main/core/paths';

// A module loader hook that notes every package an import resolves into (its first path segment under node_modules).
const HOOKS = `import fs from 'node:fs';
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  const at = result.url.lastIndexOf('/node_modules/');
  if (at >= 0) {
    const parts = result.url.slice(at + '/node_modules/'.length).split('/');
    fs.appendFileSync(process.env.INFERLAB_TEST_LOADED, (parts[0].startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]) + '\\n');
  }
  return result;
}
`;

/**
 * The packages `./bin/inferlab ARGS` imports (through ES modules, which is how the built CLI
 * reaches every package), with its exit code: what a command pays to load before it does anything.
 */
export function packagesLoadedBy(args: string[], env: NodeJS.ProcessEnv = {}): { code: number | null; packages: Set<string> } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inferlab-loaded-'));
  try {
    const hooks = path.join(dir, 'hooks.mjs');
    const register = path.join(dir, 'register.mjs');
    const log = path.join(dir, 'loaded.txt');
    fs.writeFileSync(hooks, HOOKS);
    fs.writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
    fs.writeFileSync(log, '');
    const result = spawnSync(
      process.execPath,
      ['--import', pathToFileURL(register).href, path.join(projectRoot(), 'bin', 'inferlab'), ...args],
      {
        env: { ...process.env, ...env, INFERLAB_TEST_LOADED: log },
        encoding: 'utf8',
      },
    );
    return { code: result.status, packages: new Set(fs.readFileSync(log, 'utf8').split('\n').filter(Boolean)) };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
