import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/main/core/paths';
import { DESKTOP_CONTENT_SECURITY_POLICY, desktopWindowOptions, isFromService, isServiceUrl } from '../../src/main/desktop-shell';

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
  it('hardens the Electron window: isolation, sandbox, no Node, a one-call preload, CSP, no navigation or new windows', () => {
    const main = fs.readFileSync(path.join(root, 'src/main/index.ts'), 'utf8');
    for (const packaged of [true, false]) {
      const options = desktopWindowOptions({ width: 800, height: 600 }, packaged, '/app/out/preload/index.cjs');
      expect(options.webPreferences).toEqual({
        contextIsolation: true,
        sandbox: true,
        nodeIntegration: false,
        webSecurity: true,
        preload: '/app/out/preload/index.cjs',
        devTools: !packaged,
      });
    }
    expect(main).toMatch(/desktopWindowOptions\(state, app\.isPackaged, /);
    // The preload bridges exactly one call, the model file dialog, and nothing of ipcRenderer itself.
    const preload = fs.readFileSync(path.join(root, 'src/preload/index.ts'), 'utf8');
    expect(preload.match(/exposeInMainWorld/g)).toHaveLength(1);
    expect(preload).toMatch(/chooseModelFile: \(\): Promise<string \| null> => ipcRenderer\.invoke\(CHOOSE_MODEL_CHANNEL\)/);
    expect(preload).toMatch(/exposeInMainWorld\('inferlabDesktop', bridge\)/);
    expect(preload).not.toMatch(/ipcRenderer\.(on|send|sendSync)\b|ipcRenderer[,}]/);
    expect(main).toMatch(/setWindowOpenHandler\(\(\) => \(\{ action: 'deny' \}\)\)/);
    expect(main).toMatch(/'will-navigate', \(event\) => event\.preventDefault\(\)/);
    expect(main).toMatch(/'Content-Security-Policy': \[DESKTOP_CONTENT_SECURITY_POLICY\]/);
    expect(main).toMatch(/setPermissionRequestHandler\(.*callback\(false\)\)/);
    expect(main).not.toMatch(/ELECTRON_RENDERER_URL|loadFile|webSecurity:\s*false|allowRunningInsecureContent/);
    // Same origin only: 'self' covers the page's own WebSocket; ws:/wss: would allow any host.
    for (const policy of [DESKTOP_CONTENT_SECURITY_POLICY, fs.readFileSync(path.join(root, 'src/renderer/index.html'), 'utf8')]) {
      expect(policy).toMatch(/default-src 'self'; script-src 'self'/);
      expect(policy).toMatch(/connect-src 'self';/);
      expect(policy).not.toMatch(/connect-src[^;]*wss?:|unsafe-eval/);
    }
  });

  it('answers the file dialog only to pages of the local service', () => {
    const service = `http://127.0.0.1:4321/?token=${'c'.repeat(32)}`;
    expect(isFromService('http://127.0.0.1:4321/', service)).toBe(true);
    for (const frame of [
      'http://127.0.0.1:4322/',
      'http://localhost:4321/',
      'https://127.0.0.1:4321/',
      'file:///etc/passwd',
      undefined,
      'x',
    ])
      expect(isFromService(frame, service), String(frame)).toBe(false);
  });

  it("loads only the local service's own address, carrying this launch's credential", () => {
    const credential = 'c'.repeat(32);
    expect(isServiceUrl(`http://127.0.0.1:4321/?token=${credential}`, credential)).toBe(true);
    for (const url of [
      `http://127.0.0.1:4321/?token=${'d'.repeat(32)}`,
      `http://localhost:4321/?token=${credential}`,
      `https://127.0.0.1:4321/?token=${credential}`,
      `http://127.0.0.1:4321/elsewhere?token=${credential}`,
      `http://127.0.0.1:4321/?token=${credential}&next=http://evil.example`,
      `http://evil.example/?token=${credential}`,
      'not a url',
    ])
      expect(isServiceUrl(url, credential), url).toBe(false);
  });

  it('loads no remote content in the renderer', () => {
    for (const { file, text } of all.filter(({ file }) => file.startsWith('src/renderer'))) {
      expect(text, file).not.toMatch(/(src|href)=["']https?:\/\//);
      expect(text, file).not.toMatch(/fetch\(['"`]https?:/);
    }
  });
});
