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

// "Never spawns through a shell" and "engine programs only from configuration" are proven by
// test/integration/spawn-audit.test.ts, which watches child_process itself. What stays here is
// the Electron window's configuration, which cannot be exercised without Electron's binary.
describe('security review, enforced', () => {
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
    // DevTools and a renderer URL from the environment exist only in an unpackaged (development) app.
    expect(main).toMatch(/devTools: !app\.isPackaged/);
    expect(main).toMatch(/if \(app\.isPackaged \|\| !raw\) return null;/);
    const html = fs.readFileSync(path.join(root, 'src/renderer/index.html'), 'utf8');
    expect(html).toMatch(/Content-Security-Policy" content="default-src 'self'; script-src 'self'/);
    expect(html).not.toMatch(/https?:\/\/(?!www\.w3\.org)/);
    // Same-origin only: 'self' covers the page's own WebSocket; ws:/wss: would allow any host.
    expect(html).toMatch(/connect-src 'self';/);
    expect(html).not.toMatch(/connect-src[^;]*wss?:/);
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
