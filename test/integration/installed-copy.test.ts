import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/main/core/paths';
import { startServe } from '../support/serve';
import { useTempDirs } from '../support/temp';

/**
 * The app as installed: what `npm ci` built under out/, the package's own files, and
 * node_modules without any devDependency (no tsx fallback either: there are no sources).
 * The CLI, `serve` and `app` must all work from that alone.
 */
const root = projectRoot();
const tempDir = useTempDirs();
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
const devDependencies = new Set(Object.keys(manifest.devDependencies));

function installedCopy(): string {
  const dir = tempDir();
  for (const entry of ['package.json', 'bin', 'out', 'resources'])
    fs.cpSync(path.join(root, entry), path.join(dir, entry), { recursive: true, verbatimSymlinks: true });
  const modules = path.join(dir, 'node_modules');
  fs.mkdirSync(modules);
  for (const entry of fs.readdirSync(path.join(root, 'node_modules'))) {
    if (entry === '.bin' || devDependencies.has(entry)) continue;
    if (entry.startsWith('@')) {
      fs.mkdirSync(path.join(modules, entry));
      for (const member of fs.readdirSync(path.join(root, 'node_modules', entry))) {
        if (!devDependencies.has(`${entry}/${member}`))
          fs.symlinkSync(path.join(root, 'node_modules', entry, member), path.join(modules, entry, member));
      }
    } else {
      fs.symlinkSync(path.join(root, 'node_modules', entry), path.join(modules, entry));
    }
  }
  return dir;
}

function cli(dir: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  return spawnSync(process.execPath, [path.join(dir, 'bin', 'inferlab'), ...args], {
    encoding: 'utf8',
    env: { ...process.env, INFERLAB_DATA_DIR: path.join(dir, 'data'), ...env },
    timeout: 60_000,
  });
}

describe('an installed copy without devDependencies', () => {
  beforeAll(() => {
    // What npm ci runs after installing: the same script, so the copy holds a current build.
    const build = spawnSync(process.execPath, [path.join(root, 'scripts', 'build-app.mjs')], { cwd: root, encoding: 'utf8' });
    expect(build.status, build.stderr).toBe(0);
  }, 120_000);

  it('runs the compiled CLI: help, version, and a command that opens the database', () => {
    const dir = installedCopy();
    for (const hidden of ['vite', 'electron-vite', 'vitest', 'typescript', 'eslint'])
      expect(fs.existsSync(path.join(dir, 'node_modules', hidden)), hidden).toBe(false);
    // Electron is what the desktop app runs on: installed (an optional dependency), its binary fetched on first use.
    expect(fs.existsSync(path.join(dir, 'node_modules', 'electron', 'install.js'))).toBe(true);
    expect(fs.existsSync(path.join(dir, 'src'))).toBe(false);
    const help = cli(dir, ['--help']);
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/Usage: inferlab <command>/);
    expect(cli(dir, ['--version']).stdout).toMatch(/^inferlab \d+\.\d+\.\d+/);
    const list = cli(dir, ['runs', 'list', '--json', '--db', path.join(dir, 'runs.db')]);
    expect(list.status, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual([]);
    const workload = cli(dir, ['run', '--help']);
    expect(workload.status).toBe(0);
  });

  it('serves the built UI with serve; app fetches Electron on first use and, when it cannot, says what to do, building nothing', async () => {
    const dir = installedCopy();
    // An unreachable mirror stands for "offline" here, and keeps a machine with internet from downloading.
    const child = spawnSync(process.execPath, [path.join(dir, 'bin', 'inferlab'), 'app'], {
      encoding: 'utf8',
      env: { ...process.env, INFERLAB_DATA_DIR: path.join(dir, 'data'), ELECTRON_MIRROR: 'http://127.0.0.1:9/' },
      timeout: 60_000,
    });
    expect(child.status, child.stderr).toBe(1);
    expect(child.stderr).toMatch(/fetching it once with Electron's own installer/);
    expect(child.stderr).toMatch(/the download failed \(offline, or GitHub unreachable\):\n {2}\S/);
    expect(child.stderr).toMatch(/node node_modules\/electron\/install\.js/);
    expect(child.stderr).toMatch(/\.\/bin\/inferlab serve/);
    expect(child.stderr).not.toMatch(/building|^\s+at /m);

    const serve = await startServe(['--port', '0', '--db', path.join(dir, 'serve.db')], { INFERLAB_DATA_DIR: path.join(dir, 'data') }, dir);
    try {
      const address = new URL(serve.url);
      const page = await fetch(`${address.origin}/`, { headers: { authorization: `Bearer ${address.searchParams.get('token')}` } });
      expect(page.status).toBe(200);
      expect(await page.text()).toMatch(/<div id="root">/);
      expect(serve.stderr()).not.toMatch(/building/);
    } finally {
      expect(await serve.stop()).toBe(0);
    }
  });
});
