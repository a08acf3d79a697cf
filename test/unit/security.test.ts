import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import vm from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import { Emitter } from '../../src/main/core/emitter';
import { projectRoot } from '../../src/main/core/paths';
import {
  confineWindowContents,
  DESKTOP_CONTENT_SECURITY_POLICY,
  desktopWindowOptions,
  hardenSession,
  isFromService,
  isServiceUrl,
  type HardenableSession,
} from '../../src/main/desktop-shell';
import { startHeadlessServer, type HeadlessServer } from '../../src/main/headless';
import type { ServiceContainer } from '../../src/main/services';
import { CHOOSE_MODEL_CHANNEL } from '../../src/shared/desktop-bridge';
import { useTempDirs } from '../support/temp';

const root = projectRoot();
const tempDir = useTempDirs();
const running: HeadlessServer[] = [];
afterEach(async () => {
  for (const server of running.splice(0)) await server.close();
});

function newestChange(target: string): number {
  const stat = fs.statSync(target);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...fs.readdirSync(target).map((name) => newestChange(path.join(target, name))));
}

/**
 * A file of the build, which these tests exercise as shipped. A missing or stale build fails
 * with the command that makes it: skipping would pass without having tested anything.
 */
function built(relative: string, sources: string[]): string {
  const file = path.join(root, 'out', relative);
  const run = `run \`npm run build\` in ${root}`;
  if (!fs.existsSync(file)) throw new Error(`out/${relative} is missing: ${run}`);
  if (fs.statSync(file).mtimeMs < Math.max(...sources.map((source) => newestChange(path.join(root, source)))))
    throw new Error(`out/${relative} is older than ${sources.join(', ')}: ${run}`);
  return file;
}

/** A Content-Security-Policy as directive → sources, so that policies compare whole. */
function directives(policy: string): Record<string, string[]> {
  return Object.fromEntries(
    policy
      .split(';')
      .map((part) => part.trim().split(/\s+/))
      .filter(([name]) => name)
      .map(([name, ...sources]) => [name!.toLowerCase(), sources]),
  );
}

/** Same origin for scripts, connections (the page's own WebSocket included) and everything else; no eval, no framing. */
const REQUIRED_POLICY = {
  'default-src': ["'self'"],
  'script-src': ["'self'"],
  'style-src': ["'self'", "'unsafe-inline'"],
  'img-src': ["'self'", 'data:', 'blob:'],
  'connect-src': ["'self'"],
  'object-src': ["'none'"],
  'base-uri': ["'none'"],
  // Markup that slips into the page (a tooltip) can post no form anywhere.
  'form-action': ["'none'"],
  'frame-ancestors': ["'none'"],
};

function get(port: number, target: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const request = http.get({ host: '127.0.0.1', port, path: target, headers: { host: `127.0.0.1:${port}`, ...headers } }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
    });
    request.on('error', reject);
  });
}

describe('the Electron window', () => {
  it('is isolated and sandboxed, without Node, with the preload it is given; DevTools only unpackaged', () => {
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
  });

  it('opens no new window and follows no navigation', () => {
    const contents = Object.assign(new EventEmitter(), {
      openHandler: null as null | (() => unknown),
      setWindowOpenHandler(handler: () => { action: 'deny' }) {
        this.openHandler = handler;
      },
    });
    confineWindowContents(contents);
    expect(contents.openHandler?.()).toEqual({ action: 'deny' });
    let prevented = 0;
    contents.emit('will-navigate', { preventDefault: () => (prevented += 1) }, 'http://evil.example/');
    expect(prevented).toBe(1);
  });

  it('puts the desktop CSP on every response, over any the page sent, and refuses every permission', () => {
    let headersListener: Parameters<HardenableSession['webRequest']['onHeadersReceived']>[0] | null = null;
    let permissionHandler: Parameters<HardenableSession['setPermissionRequestHandler']>[0] | null = null;
    hardenSession({
      webRequest: { onHeadersReceived: (listener) => (headersListener = listener) },
      setPermissionRequestHandler: (handler) => (permissionHandler = handler),
    });
    let answered: Record<string, string | string[]> | null = null;
    headersListener!({ responseHeaders: { 'Content-Security-Policy': ['default-src *'], 'X-Other': ['kept'] } }, (response) => {
      answered = response.responseHeaders;
    });
    expect(answered).toEqual({ 'Content-Security-Policy': [DESKTOP_CONTENT_SECURITY_POLICY], 'X-Other': ['kept'] });
    expect(directives(DESKTOP_CONTENT_SECURITY_POLICY)).toEqual(REQUIRED_POLICY);
    const granted: boolean[] = [];
    for (const permission of ['media', 'notifications', 'geolocation', 'clipboard-read'])
      permissionHandler!(null, permission, (allowed) => granted.push(allowed));
    expect(granted).toEqual([false, false, false, false]);
  });

  it('runs a preload that exposes exactly inferlabDesktop.chooseModelFile, which only invokes the model dialog', async () => {
    const code = fs.readFileSync(built('preload/index.cjs', ['src/preload', 'src/shared/desktop-bridge.ts']), 'utf8');
    const exposed = new Map<string, Record<string, unknown>>();
    const ipcUsed: string[] = [];
    const invoked: unknown[][] = [];
    const ipcRenderer = new Proxy(
      {},
      {
        get: (_target, key) => {
          ipcUsed.push(String(key));
          return key === 'invoke'
            ? (...args: unknown[]) => {
                invoked.push(args);
                return Promise.resolve('/models/chosen.gguf');
              }
            : undefined;
        },
      },
    );
    const electron = {
      contextBridge: { exposeInMainWorld: (name: string, api: Record<string, unknown>) => exposed.set(name, api) },
      ipcRenderer,
    };
    const required: string[] = [];
    // A sandboxed preload gets a require that knows a few modules only; this one gives it electron alone.
    const sandboxRequire = (id: string) => {
      required.push(id);
      if (id === 'electron') return electron;
      throw new Error(`a sandboxed preload cannot require ${id}`);
    };
    vm.runInNewContext(code, { require: sandboxRequire, module: { exports: {} }, exports: {} }, { filename: 'out/preload/index.cjs' });
    expect(required).toEqual(['electron']);
    expect([...exposed.keys()]).toEqual(['inferlabDesktop']);
    const bridge = exposed.get('inferlabDesktop')!;
    expect(Object.keys(bridge)).toEqual(['chooseModelFile']);
    expect(typeof bridge.chooseModelFile).toBe('function');
    // Loading touched nothing of ipcRenderer: no listener, no send.
    expect(ipcUsed).toEqual([]);
    expect(await (bridge.chooseModelFile as (...args: unknown[]) => Promise<unknown>)('ignored', { channel: 'other' })).toBe(
      '/models/chosen.gguf',
    );
    expect(invoked).toEqual([[CHOOSE_MODEL_CHANNEL]]);
    expect(ipcUsed).toEqual(['invoke']);
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
});

describe('the UI as inferlab serve sends it', () => {
  async function serveBuiltUi() {
    const index = built('renderer/index.html', ['src/renderer']);
    const container = {
      services: { doctor: { report: async () => ({ checks: [] }) } },
      events: new Emitter(),
      dbPath: ':memory:',
      dispose: async () => {},
    } as unknown as ServiceContainer;
    const server = await startHeadlessServer({
      container,
      rendererDir: path.dirname(index),
      host: '127.0.0.1',
      port: 0,
      tokenFile: path.join(tempDir(), 'serve-token'),
    });
    running.push(server);
    return server;
  }

  it('sends the strict CSP and the anti-framing, no-sniff and no-referrer headers with the page, its assets and a refusal', async () => {
    const server = await serveBuiltUi();
    const auth = { authorization: `Bearer ${server.token}` };
    const page = await get(server.port, '/', auth);
    expect(page.status).toBe(200);
    expect(page.body).toMatch(/<div id="root">/);
    const assets = [...page.body.matchAll(/\b(?:src|href)="([^"]+)"/g)].map((match) => match[1]!);
    expect(assets.length).toBeGreaterThan(0);
    const replies = [
      page,
      await get(server.port, '/'),
      ...(await Promise.all(assets.map((asset) => get(server.port, `/${asset.replace(/^\.?\//, '')}`, auth)))),
    ];
    expect(replies.map((reply) => reply.status)).toEqual([200, 401, ...assets.map(() => 200)]);
    for (const reply of replies) {
      expect(directives(String(reply.headers['content-security-policy']))).toEqual(REQUIRED_POLICY);
      expect(reply.headers).toMatchObject({
        'x-content-type-options': 'nosniff',
        'x-frame-options': 'DENY',
        'referrer-policy': 'no-referrer',
      });
    }
    // The page is asked for again each time; its hashed assets are kept (a changed one has a new name), and only by this browser.
    expect(page.headers['cache-control']).toBe('no-cache');
    for (const reply of replies.slice(2)) expect(reply.headers['cache-control']).toBe('private, max-age=31536000, immutable');
    // A path that is not a built file gets the page, which is never kept.
    const missing = await get(server.port, '/assets/missing-0123abcd.js', auth);
    expect([missing.status, missing.headers['cache-control']]).toEqual([200, 'no-cache']);
    // The page's own policy, for where it is opened without these headers: no weaker than them where a meta tag can say it.
    const meta = /<meta http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(page.body)?.[1];
    const own = directives(meta ?? '');
    for (const name of ['default-src', 'script-src', 'connect-src'] as const) expect(own[name], name).toEqual(REQUIRED_POLICY[name]);
    expect(own['object-src']).toEqual(["'none'"]);
    expect(own['form-action']).toEqual(["'none'"]);
  });

  it('loads nothing from another host: the page names only its own files, and no asset loads a remote address', async () => {
    const server = await serveBuiltUi();
    const page = await get(server.port, '/', { authorization: `Bearer ${server.token}` });
    for (const [, reference] of page.body.matchAll(/\b(?:src|href)="([^"]+)"/g)) expect(reference).toMatch(/^\.?\/(?!\/)/);
    const assetsDir = path.join(path.dirname(built('renderer/index.html', ['src/renderer'])), 'assets');
    const remote =
      /\b(?:url\(\s*["']?|@import\s+["']?|fetch\(\s*["'`]|import\(\s*["'`]|(?:src|href)\s*=\s*\\?["'`]|WebSocket\(\s*["'`]|EventSource\(\s*["'`])(?:https?|wss?):\/\//gi;
    for (const name of fs.readdirSync(assetsDir).filter((file) => /\.(js|css)$/.test(file))) {
      const text = fs.readFileSync(path.join(assetsDir, name), 'utf8');
      const loads = [...text.matchAll(remote)].map((match) => text.slice(match.index, match.index + 80));
      expect(loads, name).toEqual([]);
    }
  });
});
