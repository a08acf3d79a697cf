import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/main/core/paths';

const root = projectRoot();

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? sources(full) : /\.(ts|tsx)$/.test(entry.name) ? [full] : [];
  });
}

const all = sources(path.join(root, 'src')).map((file) => ({ file: path.relative(root, file), text: fs.readFileSync(file, 'utf8') }));

describe('security review, enforced', () => {
  it('never spawns through a shell', () => {
    for (const { file, text } of all) {
      expect(text, file).not.toMatch(/shell:\s*true/);
      expect(text, file).not.toMatch(/(?<![.\w])(exec|execSync|execFile|execFileSync)\s*\(/);
      expect(text, file).not.toMatch(/from 'node:child_process'[^;]*\bexec\b/);
    }
    const spawning = all.filter(({ text }) => /\bspawn(Sync)?\(/.test(text)).map(({ file }) => file);
    // Each of these passes an argv array; the list is reviewed when it grows.
    expect(spawning.sort()).toEqual([
      'src/main/cli/commands/app.ts',
      'src/main/cli/commands/serve.ts',
      'src/main/core/process.ts',
      'src/main/engines/llamacpp/backend.ts',
    ]);
  });

  it('takes engine programs only from saved configuration or the environment, never from a request', () => {
    const contract = fs.readFileSync(path.join(root, 'src/shared/contract/index.ts'), 'utf8');
    expect(contract).not.toMatch(/binary|serverPath|command/i);
    const manager = fs.readFileSync(path.join(root, 'src/main/server/server-manager.ts'), 'utf8');
    expect(manager).toMatch(/readUserConfig\(\)\.engine/);
  });

  it('hardens the Electron window: isolation, sandbox, no Node, CSP, no navigation or new windows', () => {
    const main = fs.readFileSync(path.join(root, 'src/main/index.ts'), 'utf8');
    expect(main).toMatch(/contextIsolation:\s*true/);
    expect(main).toMatch(/sandbox:\s*true/);
    expect(main).toMatch(/nodeIntegration:\s*false/);
    expect(main).toMatch(/setWindowOpenHandler\(\(\) => \(\{ action: 'deny' \}\)\)/);
    expect(main).toMatch(/'will-navigate', \(event\) => event\.preventDefault\(\)/);
    expect(main).toMatch(/Content-Security-Policy/);
    expect(main).toMatch(/setPermissionRequestHandler\(.*callback\(false\)\)/);
    expect(main).not.toMatch(/webSecurity:\s*false|allowRunningInsecureContent/);
    const html = fs.readFileSync(path.join(root, 'src/renderer/index.html'), 'utf8');
    expect(html).toMatch(/Content-Security-Policy" content="default-src 'self'; script-src 'self'/);
    expect(html).not.toMatch(/https?:\/\/(?!www\.w3\.org)/);
  });

  it('exposes nothing from the preload but the call/on bridge', () => {
    const preload = fs.readFileSync(path.join(root, 'src/preload/index.ts'), 'utf8');
    const exposed = [...preload.matchAll(/exposeInMainWorld\('(\w+)', \{([\s\S]*?)\n\}\);/g)];
    expect(exposed).toHaveLength(1);
    expect(exposed[0]![1]).toBe('inferlab');
    expect([...exposed[0]![2]!.matchAll(/^ {2}(\w+):/gm)].map((match) => match[1])).toEqual(['call', 'on']);
    expect(preload).not.toMatch(/ipcRenderer\.(send|sendSync)\(/);
  });

  it('loads no remote content in the renderer', () => {
    for (const { file, text } of all.filter(({ file }) => file.startsWith('src/renderer'))) {
      expect(text, file).not.toMatch(/(src|href)=["']https?:\/\//);
      expect(text, file).not.toMatch(/fetch\(['"`]https?:/);
    }
  });
});
